"""The experiments page's grid (nbs/10_experiments.ipynb, section 2): every reconstruction term of both CVAE families
on the demo task with b = b*, and two terms on a learned base, 3 seeds, at matched beta. Resumable: finished runs
(experiments/grid/results/, committed) are skipped, an interrupted one resumes from its checkpoint (experiments/grid/runs/,
ignored). `python experiments/grid.py --help` for the options; see inverse_surprisal.grid."""
from inverse_surprisal.grid import main

if __name__ == '__main__': main()
