"""Every notebook runs once under a real Jupyter kernel (nbclient + ipykernel): this is `make test`'s run of the
notebooks. The cells are those `nbdev_test` runs (cells flagged `#| slow` and `#| eval: false` are left out), and each
cell that shows a figure or a widget in the committed notebook must show one again. Each notebook runs in a process of
its own (`python tests/test_notebooks.py NAME`): in the long-lived test process the client now and then waited on an
idle kernel until the cell's timeout (1 of 2 full runs on 2026-12-04); in 92 runs from fresh processes it never did."""
import re, subprocess, sys
from pathlib import Path

import nbformat
import pytest
import yaml

NBS = Path(__file__).resolve().parent.parent / 'nbs'
NOTEBOOKS = sorted(p.name for p in NBS.glob('*.ipynb') if not p.name.startswith('_'))
SKIP = re.compile(r'^\s*#\s*\|\s*(slow\b|eval:\s*false\b)', re.M)
SHOWN = ('image/png', 'application/vnd.jupyter.widget-view+json')

def quick_cells(nb):
    "The code cells nbdev_test runs: without the `#| slow` and `#| eval: false` ones."
    return [c for c in nb.cells if c.cell_type != 'code' or not SKIP.search(c.source)]

def shown(cell) -> set:
    "The figure and widget kinds a code cell's outputs display."
    return {k for o in cell.get('outputs', []) for k in o.get('data', {}) if k in SHOWN}

def run_notebook(name: str):
    "Execute the notebook's quick cells in a new kernel; raise on a failing cell or a figure or widget gone."
    from nbclient import NotebookClient
    nb = nbformat.read(NBS / name, as_version=4)
    nb.cells = quick_cells(nb)
    committed = [shown(c) for c in nb.cells]
    for c in nb.cells:
        if c.cell_type == 'code': c.outputs = []
    client = NotebookClient(nb, timeout=900, kernel_name='python3', resources={'metadata': {'path': str(NBS)}})
    client.execute()                                          # raises CellExecutionError with the failing cell
    lost = [c.get('id') for c, kinds in zip(nb.cells, committed) if not kinds <= shown(c)]
    assert not lost, f"cells that showed a figure or widget when committed show none now: {lost}"

def test_quick_cells_leave_out_slow_ones():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in ('x = 1', '#| slow\nx = 2', '#|eval: false\nx = 3', '# x = 4')])
    assert [c.source for c in quick_cells(nb)] == ['x = 1', '# x = 4']

def test_every_notebook_is_in_the_sidebar():
    "A notebook left out of the sidebar is a page nobody can reach in the docs."
    listed = yaml.safe_load((NBS / 'sidebar.yml').read_text())['website']['sidebar']['contents']
    assert sorted(listed) == NOTEBOOKS

@pytest.mark.parametrize('name', NOTEBOOKS)
def test_notebook_runs_in_a_jupyter_kernel(name):
    res = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True)
    assert res.returncode == 0, f"{name}:\n{res.stdout[-4000:]}\n{res.stderr[-8000:]}"

if __name__ == '__main__': run_notebook(sys.argv[1])
