"""`python -m kubegpu`: the same command line as the `kubegpu` console script.

For environments where the script directory is not on PATH (CI images, `pipx run --spec`, notebooks).
"""

from kubegpu.cli.entry import run

if __name__ == "__main__":
    run()
