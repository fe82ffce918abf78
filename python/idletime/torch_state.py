"""Save and restore PyTorch training state through libidletime-ckpt.

Saved per checkpoint: model state_dict, optimizer state_dict, RNG states (torch CPU [+ CUDA],
numpy global, Python random) and the data position (epoch, batch index, step).

Trust model: torch checkpoints are pickles, and PyTorch 1.13's torch.load(weights_only=True)
cannot even load floats, so nothing here unpickles arbitrary objects. Each state is split into
a JSON skeleton (numbers, strings, lists, dicts; tensors replaced by indices) and a flat list of
tensors saved with torch.save and loaded with weights_only=True. On top of that the library
only returns checkpoints from a directory owned by us (mode 0700) whose munge credential decodes
to our uid and job (when munge is required).
"""
import io
import json
import random

import numpy as np
import torch

__all__ = ["save", "restore", "encode", "decode"]


def _flatten(obj, tensors):
    if isinstance(obj, torch.Tensor):
        tensors.append(obj.detach().cpu().clone() if obj.is_cuda else obj.detach())
        return {"__tensor__": len(tensors) - 1}
    if isinstance(obj, np.ndarray):
        tensors.append(torch.from_numpy(np.ascontiguousarray(obj).astype(np.int64)
                                        if obj.dtype == np.uint32 else obj.copy()))
        return {"__ndarray__": len(tensors) - 1, "dtype": str(obj.dtype)}
    if isinstance(obj, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in obj):
            return {k: _flatten(v, tensors) for k, v in obj.items()}
        return {"__dict__": [[_flatten(k, tensors), _flatten(v, tensors)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_flatten(v, tensors) for v in obj]}
    if isinstance(obj, list):
        return [_flatten(v, tensors) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    raise TypeError("idletime/ckpt: cannot save a %s in a training state" % type(obj).__name__)


def _unflatten(obj, tensors):
    if isinstance(obj, list):
        return [_unflatten(v, tensors) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tensor__" in obj:
        return tensors[obj["__tensor__"]]
    if "__ndarray__" in obj:
        return tensors[obj["__ndarray__"]].numpy().astype(obj["dtype"])
    if "__tuple__" in obj:
        return tuple(_unflatten(v, tensors) for v in obj["__tuple__"])
    if "__dict__" in obj:
        return {_unflatten(k, tensors): _unflatten(v, tensors) for k, v in obj["__dict__"]}
    return {k: _unflatten(v, tensors) for k, v in obj.items()}


def encode(obj):
    """obj -> (json bytes, tensor bytes); exact for floats (repr round-trips)."""
    tensors = []
    skeleton = json.dumps(_flatten(obj, tensors)).encode()
    buf = io.BytesIO()
    torch.save(tensors, buf)
    return skeleton, buf.getbuffer()


def decode(skeleton, tensor_bytes):
    tensors = torch.load(io.BytesIO(tensor_bytes), weights_only=True)
    return _unflatten(json.loads(skeleton), tensors)


def _rng_state():
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
             "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state):
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save(ckpt, step, model, optimizer=None, epoch=0, batch=0, extra=None, asynchronous=False):
    """Saves one checkpoint for step through ckpt (an idletime.Checkpointer)."""
    parts = {"model": model.state_dict(), "rng": _rng_state(),
             "position": {"step": step, "epoch": epoch, "batch": batch, "extra": extra}}
    if optimizer is not None:
        parts["optimizer"] = optimizer.state_dict()
    items = {}
    for name, obj in parts.items():
        items[name + ".json"], items[name + ".pt"] = encode(obj)
    ckpt.save(step, items, asynchronous=asynchronous)


def restore(ckpt, model, optimizer=None):
    """Loads the newest complete checkpoint into model/optimizer and the RNGs.

    Returns {"step", "epoch", "batch", "extra"} or None when there is no checkpoint. When the
    checkpoints cannot be checked (munged unreachable, clock skew) latest() raises
    MungeUnavailableError / ClockSkewError: let it stop the job, never train from scratch on it.
    """
    found = ckpt.latest()
    if found is None:
        return None
    step = found[0]

    def load(name):
        return decode(ckpt.read(step, name + ".json"), ckpt.read(step, name + ".pt"))

    model.load_state_dict(load("model"))
    names = {n for n, _ in ckpt.files(step)}
    if optimizer is not None and "optimizer.json" in names:
        optimizer.load_state_dict(load("optimizer"))
    _set_rng_state(load("rng"))
    return load("position")
