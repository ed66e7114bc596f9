"""Checks of the machine and the models, before anything is measured.

diagnose.py     `edgebench doctor`: the device block with the build's features, the
                build asked in a throwaway process, a tg64 speed probe in a worker
model_check.py  `edgebench models check`: each model loaded in a throwaway worker
"""
