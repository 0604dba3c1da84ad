"""The speed probe's script (experiments/probe_speed.py) on the tiny preset: a piece trains in its own process and writes its
record, a second start skips it, and a record made with other settings is refused; the seed diagnosis
(experiments/probe_seeds.py) reads the same run."""
import json, sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))
import probe_seeds
import probe_speed as ps

def test_speed_pieces_are_written_skipped_and_checked(tmp_path, capsys):
    ps.main(['--quick', '--out', str(tmp_path)])
    table = json.loads(capsys.readouterr().out)
    f = tmp_path / 'results' / 'tiny-seed0.json'
    rec = json.loads(f.read_text())
    assert [e['step'] for e in rec['curve']] == [6, 12] and table['tiny']['seeds'] == 1
    assert table['tiny']['final_median'] == rec['curve'][-1]['fraction']
    assert all(e['wall_seconds'] > 0 for e in rec['curve'])
    before = f.stat().st_mtime_ns
    ps.main(['--quick', '--out', str(tmp_path)])                   # skipped: not trained again
    assert f.stat().st_mtime_ns == before and json.loads(capsys.readouterr().out) == table
    rec['config']['steps'] = 99; f.write_text(json.dumps(rec))       # as if the preset had changed since
    with pytest.raises(ValueError, match=r"made with other settings .* differ in \['steps: 99 -> "):
        ps.main(['--quick', '--out', str(tmp_path)])

def test_seed_diagnosis_reads_the_run(tmp_path, capsys):
    ps.main(['--quick', '--out', str(tmp_path)]); capsys.readouterr()
    args = ['--arms', 'tiny', '--seeds', '0', '--runs', str(tmp_path / 'runs'), '--out', str(tmp_path / 'diagnosis')]
    probe_seeds.main(args)
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    rec = json.loads((tmp_path / 'results' / 'tiny-seed0.json').read_text())
    assert row['fraction'] == rec['curve'][-1]['fraction'] and row['classes'] == rec['curve'][-1]['classes']
    assert row['oracle_information'] > 0 and row['oracle_entropy'] >= 0 and row['posterior_entropy'] >= 0
    # an untrained-enough decoder is worse than the oracle at the true class's code, not better
    assert row['decoder_excess'] > 0
    before = (tmp_path / 'diagnosis' / 'tiny-seed0.json').stat().st_mtime_ns
    probe_seeds.main(args)                                                # read back, not computed again
    assert (tmp_path / 'diagnosis' / 'tiny-seed0.json').stat().st_mtime_ns == before
