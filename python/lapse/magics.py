"""IPython magics: ``%load_ext lapse`` registers ``%lapse`` and ``%%lapse``.

    %lapse [--top N] [--html] STATEMENT
    %%lapse [--top N] [--html]
    CELL

Each runs its code in the user's namespace under a ``Profiler`` that collects what
``lapse run`` collects (``Feature.DEFAULT``), prints the text report (``--html``: shows
the ``lapse view`` page instead) and returns the ``Profile``. IPython is needed only
here: ``import lapse`` never imports this module.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from .profile import Profile
from .profiler import Feature, Profiler


@magics_class
class LapseMagics(Magics):
    @magic_arguments()
    @argument("--top", type=int, default=10, metavar="N",
              help="rows of DOMINANT PHASES per role in the text report (default 10)")
    @argument("--html", action="store_true",
              help="show the lapse view page (Profile._repr_html_) instead of the text report")
    @argument("statement", nargs="*", help="the statement to run (%%lapse: the cell)")
    @line_cell_magic
    def lapse(self, line: str, cell: str | None = None) -> Profile:
        """Runs a statement (%lapse) or the cell (%%lapse) under a lapse Profiler,
        prints its report and returns the Profile."""
        args = parse_argstring(self.lapse, line)
        if args.top < 0:
            raise ValueError("lapse: --top must be >= 0")
        statement = " ".join(args.statement)
        if cell is None:
            source = statement
        elif statement:
            raise ValueError(f"lapse: %%lapse takes options only on its line, not {statement!r}")
        else:
            source = cell
        assert self.shell is not None
        source = self.shell.transform_cell(source)  # IPython syntax (!cmd, %magic) inside
        code = compile(source, self.shell.compile.cache(source), "exec")
        profiler = Profiler(features=Feature.DEFAULT)
        profiler.start()
        try:
            exec(code, self.shell.user_global_ns, self.shell.user_ns)
        finally:  # the report of a statement that raised is shown too, then its exception
            profiler.stop()
            profile = profiler.result()
            self._show(profile, args)
        return profile

    @staticmethod
    def _show(profile: Profile, args: Any) -> None:
        if args.html:
            from IPython.display import display

            display(profile)  # its rich form: the page (Profile._repr_html_), in notebooks
        else:
            profile.show(top=args.top)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext lapse`` (through ``lapse.load_ipython_extension``)."""
    ipython.register_magics(LapseMagics)
