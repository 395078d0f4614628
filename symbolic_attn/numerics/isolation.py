"""Run the implementation under test in a child process: ``compare`` on the command line.

The user's module is imported, and its function called, only in a child forked from the
command (``os.fork``: the child inherits the loaded package, so a case costs a message
each way, not an interpreter).  The parent sends each case's float inputs as plain data
and receives the returned arrays as raw float64 bytes with a bounded header; it alone
computes the exact results and the verdicts, so nothing the user's code does can write a
verdict:

* the child's file descriptors 1 and 2 go to a pipe the parent drains (a C library
  printing, ``os.write(1, ...)``, 100 MB of ``print``) and keeps the first
  :data:`KEEP_PRINTED` bytes of, to show; they never reach the parent's stdout;
* any end of the child without a complete, well-formed reply (``os._exit(0)``, a signal,
  a malformed or oversized message) raises :class:`ChildFailed`, naming what happened
  and the case under way: the run stops, exit 2, never a pass;
* the child leads its own process group, killed whole (SIGKILL) when the run ends or the
  ``--timeout`` alarm rings in the parent: a thread or a grandchild cannot outlive it;
* a returned array with a dimension larger than every dimension of the case is a wrong
  shape whatever it holds: only its shape is sent.

Exceptions raised by the user's code in the child (``SystemExit``, ``KeyboardInterrupt``,
``MemoryError``, ``RecursionError`` included) are that case's ``error`` verdict, as in
process.  The Python API (:mod:`symbolic_attn.testing`) calls a callable in process.
"""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import sys

from symbolic_attn.errors import BackendError, ImplementationError, SymbolicAttnError, current_activity, safe_text, shown

__all__ = ["Isolated", "ChildFailed", "KEEP_PRINTED", "spawned_child"]

#: Bytes of the child's printed output kept to show (the rest is counted and dropped).
KEEP_PRINTED = 4000
_TAIL = 160  # bytes of the last output quoted when the child dies (a fatal error message)
_MAX_HEADER = 1 << 16
_FRAME = struct.Struct("<II")  # header length, payload length
_POLL = 0.1  # seconds between checks that the child is alive (a grandchild may hold the pipe)


class ChildFailed(ImplementationError):
    """The implementation's process ended, or replied, without a well-formed result."""


class Raised(SymbolicAttnError):
    """The user's code raised in the child; the message is the child's description."""


class Isolated:
    """``MODULE:FUNCTION`` run in a child process; a context manager (the child is killed on exit).

    ``load`` turns the target into the callable (in the child).  After :meth:`start`,
    ``__qualname__`` is the function's name and ``takes_scale`` whether it accepts
    ``scale=``; :meth:`returned_in_child` runs one case.
    """

    def __init__(self, target: str, load):
        self.target, self.load = target, load
        self.pid = None
        self.__qualname__ = target.rpartition(":")[2]
        self.takes_scale = False
        self.head, self.tail, self.printed_bytes = b"", b"", 0
        self._buffer = b""

    # -- the parent's side ----------------------------------------------------------------

    def __enter__(self):
        try:
            self.start()
        except BaseException:  # a failed load, or the time limit while loading: no child left behind
            self.close()
            raise
        return self

    def __exit__(self, *exc_info):
        self.close()
        return False

    def start(self) -> None:
        """Fork the child, which loads the function; raises ImplementationError if it cannot."""
        if not hasattr(os, "fork"):
            raise BackendError("compare runs the implementation in a forked child process: this platform has no os.fork")
        for stream in (sys.stdout, sys.stderr):  # else the child would write their buffers again
            stream.flush()
        request_r, self.request_w = os.pipe()
        self.result_r, result_w = os.pipe()
        self.printed_r, printed_w = os.pipe()
        if _other_threads():
            # Forking a process that runs other threads (JAX, PyTorch, a notebook) can deadlock
            # the child on a lock one of them held: a fresh interpreter is started instead.
            self.pid = _spawn(request_r, result_w, printed_w, self.target, self.load)
        else:
            self.pid = os.fork()
        if self.pid == 0:  # the child never returns from here
            try:
                os.close(self.request_w), os.close(self.result_r), os.close(self.printed_r)
                _child(request_r, result_w, printed_w, self.target, self.load)
            finally:
                os._exit(70)
        for fd in (request_r, result_w, printed_w):
            os.close(fd)
        os.set_blocking(self.printed_r, False)
        hello, _ = self._reply(0)
        if "error" in hello:
            raise ImplementationError(str(hello["error"]))
        if not isinstance(hello.get("takes_scale"), bool) or not isinstance(hello.get("name"), str):
            raise self._failed("sent a malformed reply")
        self.takes_scale, self.__qualname__ = hello["takes_scale"], hello["name"]

    def returned_in_child(self, arrays, mask_arg, scale, shape):
        """(output, weights or None) as numpy float64 arrays, from one call in the child.

        Raises :class:`Raised` when the user's code raised (the case's error verdict) and
        :class:`ChildFailed` when the child ended or replied badly (the run stops).
        """
        np = sys.modules["numpy"]
        request = {"arrays": [a.astype(np.float64).tolist() for a in arrays], "dtype": arrays[0].dtype.name,
                   "mask": None if mask_arg is None else _listed(mask_arg),
                   "mask_dtype": None if mask_arg is None else mask_arg.dtype.name,
                   "scale": None if scale is None else float(scale), "shape": list(shape)}
        _send(self.request_w, request)
        largest = max(shape)
        header, payload = self._reply(2 * 8 * largest * largest)
        if "error" in header:
            raise Raised(safe_text(str(header["error"]), 200))
        shapes = [header.get("output"), header.get("weights")]
        if not _is_shape(shapes[0]) or not (shapes[1] is None or _is_shape(shapes[1])) or not isinstance(header.get("data"), bool):
            raise self._failed("sent a malformed reply")
        sizes = [0 if s is None else s[0] * s[1] for s in shapes]
        if header["data"] != all(max(s) <= largest for s in shapes if s is not None) or \
                len(payload) != (8 * sum(sizes) if header["data"] else 0):
            raise self._failed("sent a malformed reply")
        result, start = [], 0
        for s, size in zip(shapes, sizes):
            if s is None:
                result.append(None)
            elif header["data"]:
                result.append(np.frombuffer(payload, "<f8", size, start).reshape(s))
                start += 8 * size
            else:  # a wrong shape: its values are never read, so none were sent
                result.append(np.broadcast_to(np.float64("nan"), tuple(s)))
        return result[0], result[1]

    def printed(self) -> str:
        """What the implementation printed (cut to :data:`KEEP_PRINTED` bytes), or ''."""
        self._drain()
        if not self.printed_bytes:
            return ""
        text = self.head.decode("utf-8", "replace")
        if self.printed_bytes > len(self.head):
            text += f"\n... ({self.printed_bytes - len(self.head)} more bytes not shown)"
        return text

    def close(self) -> None:
        """Kill the child's process group and reap the child (idempotent)."""
        if self.pid is None:
            return
        self._drain()
        pid, self.pid = self.pid, None
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        for fd in (self.request_w, self.result_r, self.printed_r):
            try:
                os.close(fd)
            except OSError:
                pass

    def _reply(self, max_payload: int):
        """The next complete frame from the child, draining its printed output meanwhile."""
        while True:
            frame = self._frame(max_payload)
            if frame is not None:
                return frame
            ready, _, _ = select.select([self.result_r, self.printed_r], [], [], _POLL)
            if self.printed_r in ready:
                self._drain()
            if self.result_r in ready:
                chunk = os.read(self.result_r, 1 << 16)
                if not chunk:
                    raise self._ended()
                self._buffer += chunk
            elif not ready and self._exited() is not None:
                raise self._ended()

    def _frame(self, max_payload):
        if len(self._buffer) < _FRAME.size:
            return None
        header_size, payload_size = _FRAME.unpack_from(self._buffer)
        if header_size > _MAX_HEADER or payload_size > max_payload:
            raise self._failed(f"sent a reply of {header_size + payload_size} bytes, more than a case's result can be")
        end = _FRAME.size + header_size + payload_size
        if len(self._buffer) < end:
            return None
        header, payload = self._buffer[_FRAME.size:_FRAME.size + header_size], self._buffer[_FRAME.size + header_size:end]
        self._buffer = self._buffer[end:]
        try:
            header = json.loads(header)
        except ValueError:
            header = None
        if not isinstance(header, dict):
            raise self._failed("sent a malformed reply")
        return header, payload

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.printed_r, 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            self.printed_bytes += len(chunk)
            if len(self.head) < KEEP_PRINTED:
                self.head += chunk[: KEEP_PRINTED - len(self.head)]
            self.tail = (self.tail + chunk)[-_TAIL:]

    def _exited(self):
        """The child's wait status if it has ended (reaped), else None."""
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return None
        self._status = status
        return status

    def _ended(self) -> ChildFailed:
        """The error for a child that stopped replying: how it ended (reaped within 1 s)."""
        status = getattr(self, "_status", None)
        for _ in range(20):
            if status is not None:
                break
            status = self._exited()
            if status is None:
                select.select([], [], [], 0.05)
        if status is None:
            return self._failed("closed its result channel")
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = "an unknown signal"
            what = f"was killed by signal {number} ({name})"
        else:
            what = f"exited with status {os.WEXITSTATUS(status)}"
        return self._failed(what)

    def _failed(self, what: str) -> ChildFailed:
        self._drain()
        during = current_activity() or f"loading {self.target}"
        last = self.tail.decode("utf-8", "replace").strip()
        said = f"; its last output: {shown(last[-100:], 100)!r}" if last else ""
        return ChildFailed(f"{shown(self.target)!r}: the implementation's process {what} while {during}, "
                           f"before sending a result (no verdict){said}")


def _is_shape(value) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**31 for x in value)


def _send(fd: int, header: dict, payload: bytes = b"") -> None:
    data = json.dumps(header).encode()
    view = memoryview(_FRAME.pack(len(data), len(payload)) + data + payload)
    while view:
        view = view[os.write(fd, view):]


# -- the child's side --------------------------------------------------------------------


def _other_threads() -> bool:
    """Whether this process runs threads besides the calling one (the OS's count on Linux)."""
    try:
        return len(os.listdir("/proc/self/task")) > 1
    except OSError:
        import threading

        return threading.active_count() > 1


def _spawn(request_r, result_w, printed_w, target, load) -> int:
    """A fresh interpreter as the child (its own session), given the three pipe ends; ``load``
    is passed by its module and name, the parent's ``sys.path`` as ``PYTHONPATH``."""
    fds = (request_r, result_w, printed_w)
    for fd in fds:
        os.set_inheritable(fd, True)
    path = [os.getcwd() if not entry else entry for entry in sys.path]
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    loader = f"{load.__module__}:{load.__qualname__}"
    argv = [sys.executable, "-c", "import sys; from symbolic_attn.numerics.isolation import spawned_child; "
            "spawned_child(sys.argv[1:])", *map(str, fds), target, loader]
    try:
        return os.posix_spawn(sys.executable, argv, environment, setsid=True)
    finally:
        for fd in fds:
            os.set_inheritable(fd, False)


def spawned_child(argv) -> None:
    """Entry of a spawned child (:func:`_spawn`): the same work as a forked one."""
    request_r, result_w, printed_w = (int(fd) for fd in argv[:3])
    target, loader = argv[3], argv[4]
    module, _, name = loader.partition(":")
    import importlib

    try:
        load = getattr(importlib.import_module(module), name)
        _child(request_r, result_w, printed_w, target, load, new_session=False)
    finally:
        os._exit(70)


def _child(request_r, result_w, printed_w, target, load, new_session: bool = True) -> None:
    """The child: load, then answer one request per case until the parent closes the pipe."""
    if new_session:
        os.setsid()  # its own process group, killed whole
    for number in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(number, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the user's input() must not read the requests
    os.dup2(printed_w, 1)
    os.dup2(printed_w, 2)
    import warnings

    # The implementation's own warnings (overflow in exp...) are part of what is tested;
    # the report says what went wrong.
    warnings.simplefilter("ignore")
    try:
        fn = load(target)
        from symbolic_attn.numerics.calling import takes_scale

        hello = {"name": str(getattr(fn, "__qualname__", None) or target.rpartition(":")[2]), "takes_scale": takes_scale(fn)}
    except SymbolicAttnError as error:
        hello = {"error": str(error)}
    except BaseException as error:  # the user's module: even exit() is a failure to load
        hello = {"error": f"{shown(target)!r}: cannot load: {_describe(error)}"}
    _flush()
    _send(result_w, hello)
    if "error" in hello:
        os._exit(0)
    while True:
        request = _receive(request_r)
        if request is None:
            os._exit(0)
        header, payload = _answer(fn, request)
        _flush()
        _send(result_w, header, payload)


def _listed(array) -> list:
    """An array as JSON lists (bfloat16, which JSON cannot hold, through float64)."""
    return (array.astype("float64") if array.dtype.name == "bfloat16" else array).tolist()


def _unlisted(rows, dtype):
    """The array :func:`_listed` sent."""
    import numpy as np

    from symbolic_attn.numerics.backends import numpy_dtype

    return np.array(rows, dtype=np.float64).astype(numpy_dtype(dtype)) if dtype == "bfloat16" else np.array(rows, dtype=dtype)


def _answer(fn, request):
    """The reply to one case: the returned arrays' shapes and float64 bytes, or the error."""
    import numpy as np

    from symbolic_attn.numerics.backends import numpy_dtype
    from symbolic_attn.numerics.calling import call_converted, split_result

    n, m, d_k, d_v = request["shape"]
    arrays = [np.array(x, dtype=np.float64).astype(numpy_dtype(request["dtype"])) for x in request["arrays"]]
    mask = None if request["mask"] is None else _unlisted(request["mask"], request["mask_dtype"])
    try:
        output, weights = split_result(call_converted(fn, arrays, mask, request["scale"]), (n, d_v))
        arrays = [a for a in (output, weights) if a is not None]
        data = all(max(a.shape) <= max(n, m, d_k, d_v) for a in arrays)
        payload = b"".join(np.ascontiguousarray(a, dtype="<f8").tobytes() for a in arrays) if data else b""
    except SymbolicAttnError as error:
        return {"error": shown(str(error), 200)}, b""
    except BaseException as error:  # the user's code: any failure (even exit()) is this case's result
        return {"error": shown(_describe(error), 200)}, b""
    shape = lambda a: None if a is None else list(a.shape)  # noqa: E731
    return {"output": shape(output), "weights": shape(weights), "data": data}, payload


def _describe(error) -> str:
    try:
        return f"{type(error).__name__}: {error}"
    except BaseException:  # a hostile __str__
        return type(error).__name__


def _flush() -> None:
    """Flush what the user's code printed (Python's and C's buffers) before replying."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except BaseException:
        pass


def _receive(fd):
    """The next request, or None when the parent has closed the pipe."""
    head = _read_exactly(fd, _FRAME.size)
    if head is None:
        return None
    header_size, payload_size = _FRAME.unpack(head)
    body = _read_exactly(fd, header_size + payload_size)
    return None if body is None else json.loads(body[:header_size])


def _read_exactly(fd, size):
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data
