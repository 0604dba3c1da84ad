"""Remedies the continuous probe measured but the package does not keep (see experiments/probe_continuous.py and the continuous
CVAE's notebook): each `apply_*` patches the package's classes in the process that calls it (a probe piece runs in its own
process), so that a variant of the probe can be re-run exactly as it was measured. Research code, not package code."""
import torch
from torch import nn

from inverse_surprisal import continuous_cvae as cc, data, distributed, text, train

def _after_init(extra):
    "Run `extra(model)` after every ContinuousCVAE is built."
    init = cc.ContinuousCVAE.__init__
    def __init__(self, cfg, objective):
        init(self, cfg, objective); extra(self)
    cc.ContinuousCVAE.__init__ = __init__

def apply_film():
    """z also scales and shifts the output of every decoder block, h * (1 + gamma(e)) + beta(e) with e the prefix
    embedding of z, zero-initialised (so the decoder starts as without it)."""
    def extra(m):
        dec, d = m.decoder, m.decoder.d_model
        m.film = nn.ModuleList(nn.Linear(d, 2 * d) for _ in dec.blocks.layers)
        for f in m.film: nn.init.zeros_(f.weight); nn.init.zeros_(f.bias)
        m._film_e, to_prefix = None, m.to_prefix
        class Prefix(nn.Module):
            def __init__(s): super().__init__(); s.lin = to_prefix
            def forward(s, z): e = s.lin(z); m._film_e = e; return e
        m.to_prefix = Prefix()
        for f, layer in zip(m.film, dec.blocks.layers):
            def hook(mod, inp, out, f=f):
                if m._film_e is None: return out
                g, b = f(m._film_e).chunk(2, -1)
                return out * (1 + g[:, None]) + b[:, None]
            layer.register_forward_hook(hook)
    _after_init(extra)

def apply_decoder_lr(factor: float):
    "The decoder (and z's projection into it) at `factor` times the run's learning rate, the rest at the run's."
    def _optimizer(self, model):
        dec = [p for n, p in model.named_parameters() if n.startswith(('decoder.', 'to_prefix'))]
        ids = {id(p) for p in dec}
        rest = [p for p in model.parameters() if id(p) not in ids]
        return torch.optim.Adam([dict(params=dec, lr=self.cfg.lr * factor), dict(params=rest, lr=self.cfg.lr)])
    data.TaskData.optimizer = _optimizer

def apply_aggressive_encoder(n_inner: int=1):
    """He et al. 2019's aggressive inference-network updates, shortened: before each joint step, `n_inner` steps of the
    encoder alone (its own Adam) on batches the run's generator draws."""
    step = train.Trainer._cvae_step
    def _cvae_step(self, ddp, opt, data, gen, base_mean, s, bar):
        if not hasattr(self, '_encoder_opt'): self._encoder_opt = torch.optim.Adam(ddp.encoder.parameters(), lr=self.cfg.lr)
        for _ in range(n_inner):
            i = distributed.batch_indices(gen, len(data['input_ids']), self.cfg.batch_size, self.rank, self.world)
            o = ddp(**text.batch_rows(data, i), base_mean=base_mean, step=s)
            self._encoder_opt.zero_grad(); opt.zero_grad(); o.loss.backward(); self._encoder_opt.step(); opt.zero_grad()
        return step(self, ddp, opt, data, gen, base_mean, s, bar)
    train.Trainer._cvae_step = _cvae_step

PROTOTYPES = dict(film=apply_film, decoder_lr=apply_decoder_lr,
                  aggressive_encoder=apply_aggressive_encoder)
