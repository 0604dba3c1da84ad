"""`python kill_after.py OUT NAME ARGS...`: run `inverse-surprisal ARGS... --out OUT` and SIGKILL it right after it writes
the checkpoint file NAME (the kill-and-resume tests' stand-in for a crash)."""
import os, signal, sys
from pathlib import Path

import inverse_surprisal.train as t
from inverse_surprisal.cli import main

save = t.save_checkpoint
def save_then_die(path, **state):
    save(path, **state)
    if Path(path).name == sys.argv[2]: os.kill(os.getpid(), signal.SIGKILL)
t.save_checkpoint = save_then_die
main(sys.argv[3:] + ['--out', sys.argv[1]])
