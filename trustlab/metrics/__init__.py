"""trustlab.metrics"""
