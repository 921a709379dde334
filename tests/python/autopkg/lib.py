"""A library to instrument in place (tests/python/test_instrument.py)."""

from os.path import join  # imported: not this module's


def solve(n):
    return sum(Grid.step(i) for i in range(n)) + Grid.make().size()


def helper():
    return join("a", "b")


def numbers(n):
    yield from range(n)


class Grid:
    @staticmethod
    def step(i):
        return i

    @classmethod
    def make(cls):
        return cls()

    def size(self):
        return 1
