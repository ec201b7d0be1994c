"""``python -m codelex.structure.worker``: a structure worker process (see :mod:`codelex.structure.pool`)."""

from codelex.structure.pool import worker_main

if __name__ == "__main__":
    worker_main()
