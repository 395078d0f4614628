"""Reference modules in the libraries' own styles, written here (no transformers, no
nanoGPT package): nanoGPT's CausalSelfAttention and Hugging Face's eager_attention_forward."""

import math

from impls.libs import library


def causal_self_attention(n_embd=4, n_head=2, dtype="float32", seed=0, bug=None):
    """nanoGPT's CausalSelfAttention (model.py), dropout 0, its weights drawn from ``seed``."""
    torch = library("torch")
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=True)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=True)
            self.n_head, self.n_embd = n_head, n_embd

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if bug == "manual_unscaled":
                att = q @ k.transpose(-2, -1)
                att = att.masked_fill(torch.tril(torch.ones(T, T, dtype=torch.bool)).logical_not(), float("-inf"))
                y = F.softmax(att, dim=-1) @ v
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    torch.manual_seed(seed)
    return CausalSelfAttention().to(getattr(torch, dtype))


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """Hugging Face's eager attention (models/llama/modeling_llama.py), one KV group."""
    torch = library("torch")
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask[:, :, :, : key.shape[-2]]
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def multihead(embed_dim=4, heads=2, dtype="float32", seed=0, kdim=None, vdim=None, bias=True):
    """An nn.MultiheadAttention with weights drawn from ``seed``."""
    torch = library("torch")
    torch.manual_seed(seed)
    return torch.nn.MultiheadAttention(embed_dim, heads, bias=bias, kdim=kdim, vdim=vdim, dtype=getattr(torch, dtype))


_ = math
