"Fixtures shared by the own-data tests: a generated corpus with a locally saved tokenizer and tiny GPT-2."
import json

import numpy as np
import pytest
import torch

WORDS = 'the a cat dog sat ran on under mat log red blue big small and then'.split()

@pytest.fixture(scope='session')
def saved(tmp_path_factory):
    "A generated JSONL corpus, a word-level tokenizer and a tiny GPT-2, each saved to a local folder."
    transformers, tokenizers = pytest.importorskip('transformers'), pytest.importorskip('tokenizers')
    d = tmp_path_factory.mktemp('own')
    g = np.random.default_rng(0)
    with open(d / 'pairs.jsonl', 'w') as f:
        for _ in range(40):
            x, y = (' '.join(g.choice(WORDS, g.integers(lo, hi))) for lo, hi in ((0, 6), (1, 7)))
            f.write(json.dumps(dict(x=x, y=y)) + '\n')
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token='[UNK]'))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator([' '.join(WORDS)], tokenizers.trainers.WordLevelTrainer(special_tokens=['[PAD]', '[UNK]', '[EOS]']))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token='[PAD]', unk_token='[UNK]', eos_token='[EOS]')
    fast.save_pretrained(d / 'base')
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(fast), n_positions=16, n_embd=32, n_layer=2, n_head=4,
                                  bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(d / 'base')
    return d


def pytest_configure(config):
    config.addinivalue_line('markers', 'cuda: needs a CUDA GPU (bench/gpu_check.sh runs these; skipped without one)')


NOTEBOOK_TESTS = 'test_notebooks.py'

def pytest_collection_modifyitems(config, items):
    """The notebooks first: each a scope of its own under `--dist loadscope` (tests/test_notebooks.py) and the longest
    tests of the suite, so that no long one is left to run alone at the end."""
    items.sort(key=lambda item: item.path.name != NOTEBOOK_TESTS)
