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


# the longest scopes of `make test` (`--dist loadscope`: a module, or one notebook's class), longest first, as measured
# on 2 cores beside each other (each scope's first start to last end, 2026-12-07): the experiments page and
# test_discovery 78 s, test_train 69, the docs 57, the own-loop and own-data pages 48, test_grid 39, test_text 34,
# test_own_files 32, the grid's page 25, the continuous text probe 22, the wheel 21, test_runs 19; the rest below 18 s
LONGEST = ('test_notebooks.py::TestNotebook_10_experiments', 'test_discovery.py', 'test_train.py', 'test_docs.py',
           'test_notebooks.py::TestNotebook_13_own_loop', 'test_notebooks.py::TestNotebook_12_own_data', 'test_grid.py',
           'test_text.py', 'test_own_files.py', 'test_notebooks.py::TestNotebook_09f_grid',
           'test_probe_continuous_text.py', 'test_package.py', 'test_runs.py')

def pytest_collection_modifyitems(config, items):
    """The longest scopes first, in the order of `LONGEST`, the others after them in their own order: two workers that
    take the scopes in this order (the Makefile's `--no-loadscope-reorder`; xdist would order them by their number of
    tests) end close together, where a long scope left to the end runs alone on one core."""
    def rank(item):
        scope = item.nodeid.split('/', 1)[-1]
        return next((k for k, s in enumerate(LONGEST) if scope == s or scope.startswith(s + '::')), len(LONGEST))
    items.sort(key=rank)        # stable: each scope's tests keep their order
