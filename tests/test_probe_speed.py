"""The speed probe's script (bench/probe_speed.py) on the tiny preset: a piece trains in its own process and writes its
record, a second start skips it, and a record made with other settings is refused."""
import json, sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'bench'))
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
    rec['sets'] = ['steps=99']; f.write_text(json.dumps(rec))
    with pytest.raises(ValueError, match='made with other settings'): ps.main(['--quick', '--out', str(tmp_path)])
