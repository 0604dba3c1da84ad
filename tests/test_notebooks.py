"""Every notebook runs once: this is `make test`'s run of the notebooks. The cells are those `nbdev_test` runs (cells
flagged `#| slow` and `#| eval: false` are left out), and each cell that shows a figure or a widget in the committed
notebook must show one again.

Most pages run as `nbdev_test` runs them: in the test worker's own process, each in a fresh IPython shell of its own
(execnb's `CaptureShell`, a namespace of its own, matplotlib inline), so that a worker imports torch and transformers
once for all its pages instead of once a page (a Jupyter kernel per page cost 3-4 s of CPU a page before its first
cell). The pages whose committed outputs hold a widget (`KERNEL_PAGES`: the explorer's, and the progress bars that
tqdm draws as widgets in a kernel), and the grid's page (a thread it starts would outlive it), run under a real
Jupyter kernel (nbclient + ipykernel), each in a process of its own (`python tests/test_notebooks.py NAME`), which
prints the time each cell starts.

Why kernel runs stalled, and what ends it. 11_explorer's `widget()` cell stalled in 2 of 7 full runs on 2026-12-05 (and
once more on a fresh clone that day): kernel and client both idle. Under load (11_explorer twice at once beside a busy
core) it stalls in 6 of 7 runs, and nbclient's debug log shows where: the kernel has finished (IOPub says idle) and
its execute_reply lies in the client's shell socket, but the client's asyncio poll of that socket misses the
readiness edge (pyzmq's zmq.asyncio poll on an edge-triggered ZMQ_FD) and finds the reply only when the poll's
timeout fires; with a 40 s cell timeout every slow run took 39 s more, with the 900 s one a run sat until killed.
`SlicedPollClient` looks at the shell and IOPub sockets at least every `SLICE` seconds, so a missed edge costs at
most that: 0 of 50 runs stalled under the same load (the slowest 11 s), nor 0 of 40 through this file. A notebook still running after `STALL`
seconds is still killed with its kernel and run once more, now a guard only; the first run's cell times go to the
warnings summary."""
import os, re, subprocess, sys, time, warnings
from pathlib import Path
from queue import Empty

import nbformat
import psutil
import pytest
import yaml

NBS = Path(__file__).resolve().parent.parent / 'nbs'
NOTEBOOKS = sorted(p.name for p in NBS.glob('*.ipynb') if not p.name.startswith('_'))
SKIP = re.compile(r'^\s*#\s*\|\s*(slow\b|eval:\s*false\b)', re.M)
SHOWN = ('image/png', 'application/vnd.jupyter.widget-view+json')
STALL = 300
WIDGET = 'application/vnd.jupyter.widget-view+json'
# a page with a widget in its committed outputs, and the grid's page, which starts a grid worker's watch thread
# (`exit_with_parent`) that would outlive the page in a shared process
KERNEL_PAGES = sorted(n for n in NOTEBOOKS if WIDGET in (NBS / n).read_text() or n == '09f_grid.ipynb')
SLICE = 0.5   # seconds: the longest the client waits on a channel before looking at its socket again

def sliced(get_msg, every: float=SLICE):
    "A channel's `get_msg` that polls at most `every` s at a time, so that a missed readiness edge costs `every` s."
    async def get(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = every if deadline is None else min(every, max(0.0, deadline - time.monotonic()))
            try: return await get_msg(timeout=step)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline: raise
    return get

def sliced_poll_client():
    "nbclient's NotebookClient, its shell and IOPub waits `sliced` (the module docstring says why)."
    from nbclient import NotebookClient
    class SlicedPollClient(NotebookClient):
        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            for channel in (kc.shell_channel, kc.iopub_channel): channel.get_msg = sliced(channel.get_msg)
            return kc
    return SlicedPollClient

def quick_cells(nb):
    "The code cells nbdev_test runs: without the `#| slow` and `#| eval: false` ones."
    return [c for c in nb.cells if c.cell_type != 'code' or not SKIP.search(c.source)]

def shown(cell) -> set:
    "The figure and widget kinds a code cell's outputs display."
    return {k for o in cell.get('outputs', []) for k in o.get('data', {}) if k in SHOWN}

def quick_and_blank(nb) -> list:
    "The notebook left with its quick cells, their outputs cleared; what each of them showed when committed."
    nb.cells = quick_cells(nb)
    committed = [shown(c) for c in nb.cells]
    for c in nb.cells:
        if c.cell_type == 'code': c.outputs = []
    return committed

def still_shown(nb, committed: list):
    "Fail unless each cell that showed a figure or widget when committed shows one again."
    lost = [c.get('id') for c, kinds in zip(nb.cells, committed) if not kinds <= shown(c)]
    assert not lost, f"cells that showed a figure or widget when committed show none now: {lost}"

def run_notebook(name: str):
    "Execute the notebook's quick cells in a new kernel; raise on a failing cell or a figure or widget gone."
    nb = nbformat.read(NBS / name, as_version=4)
    committed = quick_and_blank(nb)
    def starts(cell, cell_index, **_):
        print(f"{time.strftime('%T')} cell {cell_index} ({cell.get('id')}) starts", file=sys.stderr, flush=True)
    client = sliced_poll_client()(nb, timeout=900, kernel_name='python3',
                                  resources={'metadata': {'path': str(NBS)}}, on_cell_start=starts)
    client.execute()                                          # raises CellExecutionError with the failing cell
    print(f"{time.strftime('%T')} every cell ran, the kernel is shut down", file=sys.stderr, flush=True)
    still_shown(nb, committed)

def run_in_this_process(name: str):
    """Execute the notebook's quick cells as `nbdev_test` does, in a fresh IPython shell in this process (the page's
    folder its working directory); raise on a failing cell, with its traceback, or a figure gone."""
    from execnb.nbio import read_nb
    from execnb.shell import CaptureShell
    nb = read_nb(NBS / name)
    committed = quick_and_blank(nb)
    shell, here = CaptureShell(NBS / name), os.getcwd()
    os.chdir(NBS)
    try: shell.run_all(nb, exc_stop=True)
    except BaseException as e: raise AssertionError(f"{name}:\n{shell.prettytb(fname=name)}") from e
    finally: os.chdir(here)
    still_shown(nb, committed)

def test_quick_cells_leave_out_slow_ones():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in ('x = 1', '#| slow\nx = 2', '#|eval: false\nx = 3', '# x = 4')])
    assert [c.source for c in quick_cells(nb)] == ['x = 1', '# x = 4']

def test_sliced_poll_looks_again_and_keeps_the_deadline():
    import asyncio
    looks = []
    async def get_msg(timeout=None):       # the reply is there, but the first two looks miss its edge
        looks.append(timeout)
        if len(looks) < 3: raise Empty
        return 'reply'
    assert asyncio.run(sliced(get_msg, every=0.01)(timeout=5)) == 'reply' and looks == [0.01] * 3
    async def never(timeout=None): await asyncio.sleep(timeout); raise Empty
    t = time.monotonic()
    with pytest.raises(Empty): asyncio.run(sliced(never, every=0.01)(timeout=0.05))
    assert 0.05 <= time.monotonic() - t < 1

def test_every_notebook_is_in_the_sidebar():
    "A notebook left out of the sidebar is a page nobody can reach in the docs."
    listed = yaml.safe_load((NBS / 'sidebar.yml').read_text())['website']['sidebar']['contents']
    assert sorted(listed) == NOTEBOOKS

def test_every_page_summary_is_one_whole_sentence():
    "nbdev takes a page's summary from the first `>` line of its title cell: a summary on two lines is cut in half."
    from nbdev.frontmatter import _md2dict
    for name in NOTEBOOKS:
        cells = nbformat.read(NBS / name, as_version=4).cells
        title = next(c.source for c in cells if c.cell_type == 'markdown' and c.source.lstrip().startswith('# '))
        quoted = ' '.join(line[1:].strip() for line in title.splitlines() if line.startswith('>'))
        summary = _md2dict(title).get('description', '')
        assert summary == quoted and summary.endswith(('.', '!', '?')), (name, summary)

LIBRARY_WARNING = re.compile(r'^\[transformers\]|Warning:', re.M)

def test_no_library_warning_stands_unexplained_in_a_committed_output():
    "A library's warning in a committed output reads as a fault: each one left is named here with the page's reason."
    explained = {('03a_text.ipynb', 'd54b58c6')}     # "a causal class built without `is_decoder`": the cell's point
    found = {(name, c.get('id')) for name in NOTEBOOKS for c in nbformat.read(NBS / name, as_version=4).cells
             for o in c.get('outputs', [])
             if o.get('output_type') == 'stream' and LIBRARY_WARNING.search(o.get('text', ''))}
    assert found <= explained, sorted(found - explained)

def attempt(name: str, stall: float=STALL) -> tuple:
    "(returncode, stdout, stderr) of a run in a process of its own; returncode None: killed after `stall` s."
    p = subprocess.Popen([sys.executable, __file__, name], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try: out, err = p.communicate(timeout=stall)
    except subprocess.TimeoutExpired:
        tree = psutil.Process(p.pid).children(recursive=True)     # the kernel runs in a session of its own
        for q in [p, *tree]:
            try: q.kill()
            except psutil.NoSuchProcess: pass
        return (None, *p.communicate())
    return p.returncode, out, err

def runs_in_a_jupyter_kernel(name: str):
    "The notebook's run, once more if it stalled; fails with its output when a cell fails or it stalls twice."
    code, out, err = attempt(name)
    if code is None:
        warnings.warn(f"{name} still ran after {STALL} s and was run again; where it stood:\n{err[-3000:]}")
        code, out, err = attempt(name)
        assert code is not None, f"{name} still ran after {STALL} s, twice:\n{err[-8000:]}"
    assert code == 0, f"{name}:\n{out[-4000:]}\n{err[-8000:]}"

def notebook_class(name: str) -> type:
    """A test class of one notebook. `make pytest` hands out work by scope (`--dist loadscope`): a module's tests go to
    one worker together, so that its fixtures build once, and each class is a scope of its own, so that the notebooks,
    the longest tests, spread over the workers."""
    test = (dict(test_runs_in_a_jupyter_kernel=lambda self: runs_in_a_jupyter_kernel(name)) if name in KERNEL_PAGES
            else dict(test_runs_as_nbdev_test_runs_it=lambda self: run_in_this_process(name)))
    return type(f"TestNotebook_{re.sub(r'[^0-9A-Za-z]', '_', name[:-len('.ipynb')])}", (), test)

for _cls in map(notebook_class, NOTEBOOKS): globals()[_cls.__name__] = _cls

if __name__ == '__main__': run_notebook(sys.argv[1])
