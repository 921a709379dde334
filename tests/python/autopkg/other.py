"""A module not chosen: its functions are no spans."""


def outside(x):
    return x * 2
