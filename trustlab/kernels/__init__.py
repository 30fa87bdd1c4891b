"""trustlab.kernels"""
