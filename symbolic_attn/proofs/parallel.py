r"""Independent tasks on every core, without trusting a worker for a failure.

``derive`` spends nearly all its time building, checking and printing results that do not
depend on each other, so they are done side by side.  :func:`map_forked` is
``[task() for task in tasks]`` computed by several processes:

* workers are *forked*: each starts as a copy of this process (scripts loaded, caches
  warm) and nothing is re-imported or rebuilt for it.  This process only hands out the
  tasks and collects the values, so it answers at once when the outcome is decided;
* the workers take the next task from a pipe of task numbers (a read of a few bytes from a
  pipe is atomic: each number goes to exactly one worker, and no lock can be left held);
* a worker sends back a task's *value* (pickled) only when the task succeeded.  For a
  failure it sends nothing but the fact, and this process runs that task again itself, in
  order: the error raised is exactly the one a one-process run raises (type and message).
  As soon as the first failure in order is known (every task before it has its value), the
  workers are stopped: a slow task after a failing one never delays the error.  A worker
  that dies (killed, out of memory), even in the middle of sending, counts as a failure of
  the tasks it did not report -- or, with ``on_lost``, the task it was running when it
  died is not run again here (a task that ends its process, ``os._exit``, would end this
  one too): ``on_lost(index, exitcode)`` gives its value or raises;
* a worker ends when this process does (a time limit that kills it ends the workers too),
  and flushes what its tasks printed before it leaves.

So a value is trusted exactly as far as the task that computed it: ``derive``'s tasks
build, verify and print one result each, and what comes back is the printed text of a
result the same process has just verified.

Without ``fork`` (not on Linux or macOS), in a process that runs other threads (forking it
could deadlock), with one core or one task, or with more than :data:`MAX_TASKS` tasks,
every task runs in this process.

>>> map_forked([lambda: 6 * 7, lambda: "six times seven"], jobs=2)
[42, 'six times seven']
>>> map_forked([lambda: 1, lambda: 1 // 0], jobs=2)
Traceback (most recent call last):
...
ZeroDivisionError: integer division or modulo by zero
"""

import gc
import os
import pickle
import sys
import threading
from typing import Any, Callable, Sequence

__all__ = ["available_cores", "can_fork", "map_forked", "MAX_JOBS", "MAX_TASKS"]

#: At most this many worker processes, whatever the machine has.
MAX_JOBS = 64
#: At most this many tasks are handed out through the pipe (its buffer holds them all).
MAX_TASKS = 8192

_INDEX_BYTES = 4


def available_cores() -> int:
    """The number of cores this process may use (its CPU affinity, where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """True when forking is available and safe: this process runs a single thread.

    A thread holding a lock at the moment of the fork (JAX and PyTorch start native threads
    of their own) would leave the child waiting for it forever, so a process with more than
    one thread runs every task itself.
    """
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and _threads() == 1


def _threads() -> int:
    """Threads of this process, native ones included (Linux: /proc/self/task)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def map_forked(tasks: Sequence[Callable[..., Any]], jobs: int | None = None, start_with: Sequence[int] = (),
               on_value: Callable[..., Any] | None = None,
               on_lost: Callable[[int, int], Any] | None = None) -> list[Any]:
    """``[task() for task in tasks]``, computed by ``jobs`` processes (default: every core).

    Each task is called without arguments; a value computed by a worker must be picklable
    (one that is not is computed again here).  The first task in order that raises makes
    this raise the same exception.  ``start_with``: indices of tasks to hand out first (the
    longest ones, so that no process is left with a long task at the end).  ``on_value(index,
    value)`` is called for each value in task order, as soon as it and all before it are known.
    ``on_lost(index, exitcode)``: the value (or the exception) of a task whose worker died
    while running it (``exitcode`` as :attr:`multiprocessing.Process.exitcode`: negative for
    a signal); without it such a task is run again here.
    """
    tasks = list(tasks)
    jobs = min(available_cores() if jobs is None else jobs, len(tasks), MAX_JOBS)
    values: dict[int, Any] = {}
    lost: dict[int, int] = {}
    emitted = 0
    if jobs > 1 and len(tasks) <= MAX_TASKS and can_fork():
        first = [index for index in dict.fromkeys(start_with) if 0 <= index < len(tasks)]
        schedule = first + [index for index in range(len(tasks)) if index not in first]
        values, emitted, lost = _run_forked(tasks, jobs, schedule, on_value)
    out = []
    for index, task in enumerate(tasks):
        # A value not reported (the task failed in a worker, its worker died, or the workers
        # were stopped at the first failure) is computed here, in order, as one process would;
        # with on_lost, a task that was running when its worker died is not run again.
        if index in values:
            value = values[index]
        elif index in lost and on_lost is not None:
            value = on_lost(index, lost[index])
        else:
            value = task()
        out.append(value)
        if on_value is not None and index >= emitted:
            on_value(index, value)
    return out


# ----------------------------------------------------------------------------- workers


def _run_forked(tasks: Any, jobs: Any, schedule: Any, on_value: Any) -> tuple[Any, ...]:
    """``(values, emitted, lost)``: the values the workers reported, how many of the first
    ones were passed to ``on_value``, and ``{index: exitcode}`` of the tasks a worker was
    running when it died.  Stops once the first failure in order is known."""
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork")
    read_end: int | None
    receive: Any  # a worker's receiving end (what wait() hands back)
    workers: dict[Any, Any]
    read_end, write_end = os.pipe()
    os.write(write_end, b"".join(index.to_bytes(_INDEX_BYTES, "big") for index in schedule))
    os.close(write_end)  # the workers see the end of the pipe once every task is taken
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # or a worker would print this process's pending output again
        except (OSError, ValueError):
            pass
    # Everything allocated so far (modules, loaded scripts) is set aside from the cyclic
    # garbage collector while the tasks run: shorter collections in every process, and the
    # workers do not copy memory pages just to mark objects (Python's advice for fork).
    froze = gc.get_freeze_count() == 0
    if froze:
        gc.freeze()
    workers, values, failed, emitted = {}, {}, set(), 0
    # Each worker writes the number of every task it starts to a pipe of its own, before
    # running it (a write of 4 bytes is atomic and survives the worker's death): a worker
    # that ends without reporting a task it started died while running it.
    started: dict[Any, int] = {}
    lost: dict[int, int] = {}
    try:
        for _ in range(jobs):
            receive, send = context.Pipe(duplex=False)
            started_read, started_write = os.pipe()
            try:
                process = context.Process(target=_worker, args=(tasks, read_end, send, os.getpid(), started_write),
                                          daemon=True)
                process.start()
            finally:
                send.close()  # only the worker holds its sending end: its death is an end of file here
                os.close(started_write)
            workers[receive] = process
            started[receive] = started_read
        os.close(read_end)
        read_end = None
        while workers:
            for receive in wait(list(workers)):
                try:
                    index, ok, payload = pickle.loads(receive.recv_bytes())
                except Exception:  # end of file: the worker is done, or died (even mid-message)
                    process = workers.pop(receive)
                    _stop(process, receive)
                    for index in _started(started.pop(receive)):
                        if index not in values and index not in failed:
                            lost[index] = process.exitcode if process.exitcode is not None else -1
                    continue
                value, ok = _loaded(payload) if ok else (None, False)
                if ok:
                    values[index] = value
                else:  # failed in the worker, or a value that does not load here: computed here
                    failed.add(index)
            while emitted in values:
                if on_value is not None:
                    on_value(emitted, values[emitted])
                emitted += 1
            if failed and min(failed) <= emitted:
                break  # every task before the first failure has its value: the outcome is decided
        return values, emitted, lost
    finally:
        if read_end is not None:
            os.close(read_end)
        for receive, process in workers.items():
            _stop(process, receive)
        for descriptor in started.values():
            os.close(descriptor)
        if froze:
            gc.unfreeze()


def _loaded(payload: Any) -> tuple[Any, ...]:
    """``(value, True)``, or ``(None, False)`` for a value that does not unpickle here."""
    try:
        return pickle.loads(payload), True
    except Exception:  # noqa: BLE001 - whatever the reason, the parent computes it itself
        return None, False


def _started(descriptor: int) -> list[int]:
    """The task numbers a (finished) worker wrote to its pipe of started tasks; closes it."""
    data = b""
    try:
        os.set_blocking(descriptor, False)  # a process the task forked may still hold the pipe
        while chunk := os.read(descriptor, 65536):
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(descriptor)
    return [int.from_bytes(data[start:start + _INDEX_BYTES], "big")
            for start in range(0, len(data) - _INDEX_BYTES + 1, _INDEX_BYTES)]


def _stop(process: Any, receive: Any) -> None:
    if process.is_alive():
        process.kill()
    process.join()
    receive.close()


def _worker(tasks: Any, schedule: Any, send: Any, parent: Any, started: int) -> None:
    """A forked worker: run the tasks it takes from the pipe, send ``(index, ok, value)`` for
    each; the number of each task is written to ``started`` before it runs."""
    import queue

    _exit_with_parent(parent)
    # A short-lived process: the cyclic garbage collector, scanning SymPy's many small
    # objects again and again, is switched off (SymPy's expressions hold no cycles; memory
    # is freed by reference counting as usual, and the process ends with its tasks).
    gc.disable()
    outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def post() -> None:
        # Sending happens beside the work, so a large value never holds up the next task.
        while (message := outbox.get()) is not None:
            send.send_bytes(message)

    poster = threading.Thread(target=post, daemon=True)
    poster.start()
    try:
        while len(chunk := os.read(schedule, _INDEX_BYTES)) == _INDEX_BYTES:
            index = int.from_bytes(chunk, "big")
            os.write(started, chunk)
            try:
                # Pickled here, so a value that cannot be sent is a failure of this task
                # (computed again by the parent), never lost output.
                payload, ok = pickle.dumps(tasks[index](), protocol=pickle.HIGHEST_PROTOCOL), True
            except BaseException:  # noqa: BLE001 - SystemExit too: the parent runs it again, raises the real error
                payload, ok = b"", False
            outbox.put(pickle.dumps((index, ok, payload), protocol=pickle.HIGHEST_PROTOCOL))
        outbox.put(None)
        poster.join()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # what a task printed (a script's build may print)
            except (OSError, ValueError):
                pass
        # Leave at once: no atexit handler or cleanup of the parent's copy runs twice.
        os._exit(0)


def _exit_with_parent(parent: int) -> None:
    """End this worker when its parent (``parent``, read before the fork) is gone."""

    def watch() -> None:
        import time

        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
