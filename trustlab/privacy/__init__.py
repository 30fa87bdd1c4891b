"""trustlab.privacy"""
