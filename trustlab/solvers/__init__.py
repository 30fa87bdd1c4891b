"""trustlab.solvers"""
