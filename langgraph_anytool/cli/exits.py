"""Exit codes of the batch and evaluation commands beyond 0 (done), 2 (a usage error or bad input) and 130 (Ctrl-C)."""

from __future__ import annotations

EXIT_ALL_ERRORS = 3  # `eval run`: every query of the batch ended in an error (none has an answer to score)
EXIT_EVALUATOR = 4  # an evaluator call failed: the items it did not score have no score (see --failed-as-zero)

RUN_EPILOG = (f"exit status: 0 when the batch ran (whatever its queries' outcomes), {EXIT_ALL_ERRORS} when every "
              "query of the batch (the selected queries on file) ended in an error, 2 on a usage error or bad input "
              "(a model without a key or package, a model whose endpoint refuses the key or does not answer: no "
              "query is run and no record written), 130 when interrupted (Ctrl-C; the same command resumes)")
EVALUATOR_EPILOG = (f"exit status: 0 when every item was scored, {EXIT_EVALUATOR} when an evaluator call failed (one "
                    "line names the evaluator and the fault; no score is printed from items that were not scored "
                    "unless --failed-as-zero is given, which counts them as failed), 2 on a usage error or bad input")
