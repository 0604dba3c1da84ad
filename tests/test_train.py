"The trainer and CLI end to end on the tiny preset: files, config errors, kill-and-resume, 2 processes, tampering."
import json, os, shutil, subprocess, sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the tests' helpers
from runs import BIN, KILL_AFTER, cli, records, run, without_wall

CLI = [str(BIN / 'inverse-surprisal')]

@pytest.fixture(scope='module')
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp('runs') / 'whole'
    res = cli('train', '--preset', 'tiny', '--out', out, '--no-progress')
    assert 'information_gain' in res.stdout and 'oracle_information' in res.stdout   # the end-of-run table
    return out

def test_run_directory(uninterrupted):
    names = {p.name for p in uninterrupted.iterdir()}
    assert {'config.json', 'metrics.jsonl', 'metrics.json', 'training.png', 'cvae.safetensors', 'base.safetensors', 'base_train.iscache', 'tensorboard'} <= names
    m = json.loads((uninterrupted / 'metrics.json').read_text())
    for k in ('oracle_information', 'information_gain', 'base_gap_per_token', 'kl', 'nmi_joint', 'nmi_transform', 'nmi_rotation', 'mig', 'efficiency', 'wall_seconds'):
        assert k in m
    assert all('step' in r and ('loss' in r or r['phase'] == 'eval') for r in records(uninterrupted))
    report = cli('report', uninterrupted)
    assert (uninterrupted / 'report.md').exists() and 'information_gain' in report.stdout

def test_bad_config_is_rejected(tmp_path):
    res = cli('train', '--preset', 'tiny', '--out', tmp_path / 'x', '--set', 'objective.betta=1', check=False)
    assert res.returncode == 2 and "unknown config key(s) ['objective.betta']" in res.stderr
    res = cli('train', '--preset', 'tiny', '--out', tmp_path / 'x', '--beta', '-1', check=False)
    assert res.returncode == 2 and 'beta must be a finite number >= 0' in res.stderr
    assert 'reconstruction term' in cli('train', '--help').stdout

def test_existing_run_needs_resume(uninterrupted, tmp_path):
    copy = tmp_path / 'copy'; shutil.copytree(uninterrupted, copy)
    res = cli('train', '--preset', 'tiny', '--out', copy, '--no-progress', check=False)
    assert res.returncode != 0 and 'pass --resume' in res.stderr

@pytest.mark.parametrize('killed_after', ['base.safetensors', 'cvae.safetensors'])
def test_killed_and_resumed_equals_uninterrupted(uninterrupted, tmp_path, killed_after):
    "SIGKILL right after the base model's checkpoint, or after the first CVAE checkpoint, then --resume."
    out = tmp_path / 'killed'
    res = run(sys.executable, KILL_AFTER, out, killed_after, 'train', '--preset', 'tiny', '--no-progress', check=False)
    assert res.returncode == -9 and not (out / 'metrics.json').exists()
    cli('train', '--preset', 'tiny', '--out', out, '--resume', '--no-progress')
    assert without_wall(json.loads((out / 'metrics.json').read_text())) == without_wall(json.loads((uninterrupted / 'metrics.json').read_text()))
    strip = lambda rs: [without_wall(r) for r in rs]
    assert strip(records(out)) == strip(records(uninterrupted))
    # TensorBoard's scalars too: no step written twice, none lost (wall seconds apart)
    assert scalars(out) == scalars(uninterrupted)

def scalars(run_dir) -> dict:
    "(tag, step) -> value of every TensorBoard scalar but the wall times, through TensorBoard's own reader."
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(run_dir / 'tensorboard'), size_guidance={'scalars': 0}).Reload()
    got = {}
    for tag in acc.Tags()['scalars']:
        if tag.endswith('wall_seconds'): continue
        for e in acc.Scalars(tag):
            assert (tag, e.step) not in got, f"{tag} at step {e.step} written twice"
            got[tag, e.step] = e.value
    return got

def test_tampered_checkpoint_is_detected(uninterrupted, tmp_path):
    copy = tmp_path / 'tampered'; shutil.copytree(uninterrupted, copy)
    raw = bytearray((copy / 'cvae.safetensors').read_bytes()); raw[len(raw) // 2] ^= 0xFF
    (copy / 'cvae.safetensors').write_bytes(bytes(raw))
    res = cli('train', '--preset', 'tiny', '--out', copy, '--resume', '--no-progress', check=False)
    assert res.returncode != 0 and 'fails its checksum' in res.stderr

def test_compare_trains_each_base_once(tmp_path):
    one = tmp_path / 'one'
    res = cli('compare', '--preset', 'tiny', '--out', one, '--no-progress')
    assert all(f'| {r} | 0 |' in res.stdout for r in ('plain', 'example', 'distribution', 'token'))
    assert (one / 'compare.md').exists()
    names = dict(plain='plain', example='example-eps0.1', distribution='distribution', token='token')
    base_lines = {r: sum(json.loads(l)['phase'] == 'base' for l in (one / 'runs' / f'discrete-learned-{n}-seed0' / 'metrics.jsonl').read_text().splitlines())
                  for r, n in names.items()}
    assert base_lines['plain'] > 0 and base_lines['example'] == base_lines['distribution'] == base_lines['token'] == 0
    # under torchrun: every rank trains each run, rank 0 writes the records and the one table, the same figures
    script = tmp_path / 'teardown.py'; script.write_text(TEARDOWN)
    two = run(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', script, 'compare',
              '--preset', 'tiny', '--out', tmp_path / 'two', '--no-progress', env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert two.stdout.count('process group destroyed: True') == 2 and two.stdout.count('| plain | 0 |') == 1, two.stdout
    one_recs, two_recs = ({p.name: json.loads(p.read_text()) for p in (d / 'results').glob('*.json')} for d in (one, tmp_path / 'two'))
    assert sorted(one_recs) == sorted(two_recs) and len(one_recs) == 4
    for name, rec in one_recs.items():
        for k in ('information_gain', 'kl'): assert abs(rec['metrics'][k] - two_recs[name]['metrics'][k]) <= 1e-3, (name, k)

def test_resume_refuses_other_settings(uninterrupted, tmp_path):
    copy = tmp_path / 'copy'; shutil.copytree(uninterrupted, copy)
    res = cli('train', '--preset', 'tiny', '--out', copy, '--resume', '--seed', '1', '--set', 'lr=0.01', '--no-progress', check=False)
    assert res.returncode == 2 and 'the settings differ' in res.stderr and 'lr: 0.003 -> 0.01; seed: 0 -> 1' in res.stderr, res.stderr
    assert 'Traceback' not in res.stderr and json.loads((copy / 'config.json').read_text())['seed'] == 0   # config.json untouched

def test_resume_needs_a_run(tmp_path):
    res = cli('train', '--preset', 'tiny', '--out', tmp_path / 'none', '--resume', '--no-progress', check=False)
    assert res.returncode == 2 and 'holds no run to continue' in res.stderr and not (tmp_path / 'none').exists()

def test_resume_drops_a_torn_line_and_stale_temp_files(uninterrupted, tmp_path):
    "A kill mid-write leaves half a log line and a temp file: --resume drops both and ends as if never stopped."
    out = tmp_path / 'torn'; shutil.copytree(uninterrupted, out)
    (out / 'cvae.safetensors').unlink(); (out / 'metrics.json').unlink()
    with open(out / 'metrics.jsonl', 'a') as f: f.write('{"phase": "cvae", "st')
    (out / '.metrics.json.x1y2.tmp').write_text('{"half')
    cli('train', '--preset', 'tiny', '--out', out, '--resume', '--no-progress')
    assert without_wall(json.loads((out / 'metrics.json').read_text())) == without_wall(json.loads((uninterrupted / 'metrics.json').read_text()))
    assert not list(out.glob('.*.tmp'))

def test_results_are_readable_by_others(uninterrupted):
    umask = os.umask(0); os.umask(umask)
    for name in ('config.json', 'metrics.json', 'metrics.jsonl', 'cvae.safetensors'):
        assert (uninterrupted / name).stat().st_mode & 0o777 == 0o666 & ~umask, name

def test_file_errors_are_one_line(tmp_path):
    "A missing or malformed --config and an --out that is a file: exit 2 and one line naming the file, no traceback."
    bad = tmp_path / 'bad.json'; bad.write_text('{"seed": ')
    wrong = tmp_path / 'wrong.json'; wrong.write_text('{"seed": -3}')
    a_file = tmp_path / 'a_file'; a_file.write_text('x')
    for args, msg in ((['--config', tmp_path / 'missing.json'], f"config file {tmp_path / 'missing.json'}: no such file"),
                      (['--config', bad], f"config file {bad}: not a JSON config"),
                      (['--config', wrong], f"config file {wrong}: seed must be an int >= 0, got -3"),
                      (['--preset', 'tiny', '--out', a_file], f"--out {a_file} is a file, not a run directory")):
        res = cli('train', *args, '--no-progress', check=False)
        assert res.returncode == 2 and msg in res.stderr and 'Traceback' not in res.stderr, (args, res.stderr)
    for seeds in (['0', '0'], ['-1']):       # compare's seeds: one line each, before any run
        res = cli('compare', '--preset', 'tiny', '--seeds', *seeds, '--out', tmp_path / 'c', check=False)
        assert res.returncode == 2 and 'Traceback' not in res.stderr and not (tmp_path / 'c').exists(), res.stderr
        assert res.stderr.splitlines()[-1].endswith(f"--seeds must be distinct ints >= 0 (one run of every term each), got {' '.join(seeds)}")

# the demo's task and discovery model (12 classes, batch 64: large enough for the kernels that once differed between
# processes), with the exact b* and 8 steps so that it takes seconds; 2 threads, as on the CI machine
DEMO_SHORT = ['--preset', 'demo', '--base', 'oracle', '--set', 'steps=8', '--set', 'eval_every=4', '--set', 'log_every=1', '--no-progress']

def test_same_seed_same_numbers_in_new_processes(tmp_path):
    "Two processes with one seed give bit-identical logs and metrics; so does a run killed after a checkpoint and resumed."
    env = dict(os.environ, OMP_NUM_THREADS='2')
    for name in ('first', 'second'): run(*CLI, 'train', *DEMO_SHORT, '--out', tmp_path / name, env=env)
    res = run(sys.executable, KILL_AFTER, tmp_path / 'killed', 'cvae.safetensors', 'train', *DEMO_SHORT, env=env, check=False)
    assert res.returncode == -9 and not (tmp_path / 'killed' / 'metrics.json').exists()
    run(*CLI, 'train', *DEMO_SHORT, '--out', tmp_path / 'killed', '--resume', env=env)
    first = [without_wall(r) for r in records(tmp_path / 'first')]
    assert len(first) == 8 + 2 and [r['phase'] for r in first].count('eval') == 2
    from inverse_surprisal.run_dir import load_checkpoint
    rng = [load_checkpoint(tmp_path / name / 'cvae.safetensors')['rng'] for name in ('first', 'second')]
    same = lambda k: torch.equal(torch.as_tensor(rng[0][k]), torch.as_tensor(rng[1][k]))
    assert rng[0].keys() == rng[1].keys() and all(map(same, rng[0])), 'every stream a checkpoint records: one state'
    for name in ('second', 'killed'):
        assert [without_wall(r) for r in records(tmp_path / name)] == first, name
        assert dict(phase='eval', **without_wall(json.loads((tmp_path / name / 'metrics.json').read_text()))) == first[-1], name

def test_refusal_on_rank0_stops_every_rank(uninterrupted, tmp_path):
    "Two processes started by hand (no torchrun agent to kill a straggler): rank 0 refuses the run directory, both exit 2."
    copy = tmp_path / 'copy'; shutil.copytree(uninterrupted, copy)
    env = dict(os.environ, MASTER_ADDR='127.0.0.1', MASTER_PORT=str(29500 + os.getpid() % 1000), WORLD_SIZE='2', OMP_NUM_THREADS='1')
    procs = [subprocess.Popen([*CLI, 'train', '--preset', 'tiny', '--out', str(copy), '--no-progress', '--device', 'cpu'],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in (0, 1)]
    outs = [p.communicate(timeout=120) for p in procs]                 # before the change rank 1 waited at a barrier
    assert [p.returncode for p in procs] == [2, 2], outs
    assert 'already holds a run: pass --resume' in outs[0][1] and 'Traceback' not in outs[0][1] + outs[1][1]

TEARDOWN = """
import sys
import torch.distributed as dist
import inverse_surprisal.train as t
from inverse_surprisal.cli import main
main(sys.argv[1:])
# one string: print's pieces are separate writes, and the other rank's lines fall between them on the shared pipe
print(f'process group destroyed: {not dist.is_initialized()}', flush=True)
"""

def test_two_processes_match_one(uninterrupted, tmp_path):
    out = tmp_path / 'ddp'
    env = dict(os.environ, OMP_NUM_THREADS='1')
    script = tmp_path / 'teardown.py'; script.write_text(TEARDOWN)
    res = run(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', script,
              'train', '--preset', 'tiny', '--out', out, '--no-progress', env=env)
    assert res.stdout.count('process group destroyed: True') == 2, res.stdout
    one, two = records(uninterrupted), records(out)
    for phase in ('base', 'cvae'):
        a = [r for r in one if r['phase'] == phase][:2]; b = [r for r in two if r['phase'] == phase][:2]
        assert [r['step'] for r in a] == [r['step'] for r in b]
        for ra, rb in zip(a, b): assert abs(ra['loss'] - rb['loss']) <= 1e-4 * abs(ra['loss']), (phase, ra, rb)
    assert (out / 'metrics.json').exists() and not list(out.glob('.*.tmp'))

def test_device_errors_are_one_line(tmp_path):
    cases = [('nonsense', "--device 'nonsense':")]
    if not torch.cuda.is_available(): cases.append(('cuda', '--device cuda: CUDA is not available on this machine'))
    for device, msg in cases:
        res = cli('train', '--preset', 'tiny', '--out', tmp_path / device, '--device', device, check=False)
        assert res.returncode == 2 and msg in res.stderr and 'Traceback' not in res.stderr, res.stderr
        assert not (tmp_path / device).exists()

def test_progress_lines_when_not_a_terminal(tmp_path):
    "Into a pipe, progress is one line every log_every steps (no carriage returns); stdout ends with the run directory."
    res = run(*CLI, 'train', '--preset', 'tiny', '--out', tmp_path / 'run', '--device', 'cpu')
    assert '\r' not in res.stderr
    assert [l.split(',')[0] for l in res.stderr.splitlines() if l.startswith('discrete CVAE')] == \
           [f'discrete CVAE (plain): step {s}/12' for s in (3, 6, 9, 12)], res.stderr
    assert res.stdout.strip().splitlines()[-1].startswith(f"run directory: {(tmp_path / 'run').resolve()}")
    assert 'nats/token' in res.stdout and 'The CVAE is worse than the z-free oracle' in res.stdout

def test_bf16_autocast_runs_the_matmuls_in_bfloat16(tmp_path):
    "precision=bf16: the CVAE's linear layers compute in bfloat16 while losses stay float32; fp32 computes in float32."
    from inverse_surprisal.config import make_config
    from inverse_surprisal.train import Trainer
    seen = {}
    def record(module, args, out):
        if isinstance(module, torch.nn.Linear) and torch.is_grad_enabled(): seen.setdefault(seen['run'], set()).add(out.dtype)
    handle = torch.nn.modules.module.register_module_forward_hook(record)
    try:
        runs = {}
        for precision in ('fp32', 'bf16'):
            seen['run'] = precision
            cfg = make_config('tiny', dict(base=dict(source='oracle'), precision=precision, steps=4, eval_every=4, log_every=1))
            runs[precision] = Trainer(cfg, tmp_path / precision, progress=False, device='cpu').fit()
    finally: handle.remove()
    assert seen['fp32'] == {torch.float32} and seen['bf16'] == {torch.bfloat16}, seen
    first = {p: [r for r in records(tmp_path / p) if r['phase'] == 'cvae'][0]['loss'] for p in runs}
    assert first['fp32'] != first['bf16'] and abs(first['fp32'] - first['bf16']) < 0.02 * abs(first['fp32']), first
