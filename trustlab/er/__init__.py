"""trustlab.er"""
