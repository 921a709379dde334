"""Functions whose calls the automatic-span tests count: run(n) calls leaf 2n
times, Worker.step n times, gen's body resumes n + 1 times, and fails once."""


def leaf(x):
    return x + 1


class Worker:
    def step(self, x):
        return leaf(x)


def gen(n):
    for i in range(n):
        yield i


def fails():
    raise ValueError("known")


def run(n):
    w = Worker()
    total = 0
    for i in range(n):
        total += leaf(i) + w.step(i)
    total += sum(gen(n))
    try:
        fails()
    except ValueError:
        pass
    return total
