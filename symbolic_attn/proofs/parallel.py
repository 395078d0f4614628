r"""Independent tasks on every core, without trusting a worker for a failure.

``derive`` spends nearly all its time building, checking and printing results that do not
depend on each other, so they are done side by side.  :func:`map_forked` is
``[task() for task in tasks]`` computed by several processes:

* workers are *forked*: each starts as a copy of this process (scripts loaded, caches
  warm) and nothing is re-imported or rebuilt for it;
* workers and this process take the next task from a shared counter, so one slow task does
  not hold up the rest;
* a worker sends back a task's *value* (pickled) only when the task succeeded.  For a
  failure it sends nothing but the fact, and this process runs that task again itself, in
  order: the error raised is exactly the one a one-process run raises (type and message),
  and it is the error of the first failing task in order.  A worker that dies (killed, out
  of memory) counts as a failure the same way;
* a worker ends when its parent does (a time limit that kills the parent kills it too).

So a value is trusted exactly as far as the task that computed it: ``derive``'s tasks
build, verify and print one result each, and what comes back is the printed text of a
result the same process has just verified.

Without ``fork`` (not on Linux or macOS), in a process that runs other threads (forking it
could deadlock), or with one core or one task, every task runs in this process.

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
import threading
from typing import Callable, Sequence

__all__ = ["available_cores", "map_forked", "MAX_JOBS"]

#: At most this many processes, whatever the machine has.
MAX_JOBS = 32

# What a worker sends for a task that raised (the parent runs it again to see the error).
_FAILED = "failed"
_DONE = "done"


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


def map_forked(tasks: Sequence[Callable], jobs: int | None = None, start_with: Sequence[int] = ()) -> list:
    """``[task() for task in tasks]``, computed by ``jobs`` processes (default: every core).

    Each task is called without arguments; a value computed by a worker must be picklable
    (one that is not is computed again here).  The first task in order that raises makes
    this raise the same exception.  ``start_with``: indices of tasks to take first (the
    longest ones, so that no process is left with a long task at the end).
    """
    tasks = list(tasks)
    jobs = min(available_cores() if jobs is None else jobs, len(tasks), MAX_JOBS)
    if jobs <= 1 or not can_fork():
        return [task() for task in tasks]
    first = [index for index in dict.fromkeys(start_with) if 0 <= index < len(tasks)]
    schedule = first + [index for index in range(len(tasks)) if index not in first]
    values, errors = _run_forked([(index, tasks[index]) for index in schedule], jobs)
    out = []
    for index, task in enumerate(tasks):
        if index in errors:
            raise errors[index]
        out.append(values[index] if index in values else task())
    return out


# ----------------------------------------------------------------------------- workers


def _run_forked(tasks, jobs):
    """``(values, errors)``: what this process and the workers computed, by task index.

    ``tasks`` are ``(index, task)`` pairs in the order they are taken.

    ``errors`` holds only this process's own failures; a task a worker failed (or never
    reported) is in neither, and :func:`map_forked` runs it here.
    """
    import multiprocessing

    context = multiprocessing.get_context("fork")
    counter, queue = context.Value("i", 0), context.Queue()
    workers = [context.Process(target=_worker, args=(tasks, counter, queue), daemon=True) for _ in range(jobs - 1)]
    # Everything allocated so far (modules, loaded scripts) is set aside from the cyclic
    # garbage collector while the tasks run: the collections get shorter in every process,
    # and the children do not copy pages just to mark objects (Python's advice for fork).
    gc.freeze()
    try:
        for worker in workers:
            worker.start()
        values, errors = _work(tasks, counter)
        values.update(_receive(queue, workers))
        return values, errors
    finally:
        gc.unfreeze()
        for worker in workers:
            if worker.is_alive():
                worker.kill()
            worker.join()
        queue.close()


def _take(counter) -> int:
    with counter.get_lock():
        index = counter.value
        counter.value += 1
    return index


def _work(tasks, counter):
    """This process's share: tasks from the shared counter until none are left."""
    values, errors = {}, {}
    while (taken := _take(counter)) < len(tasks):
        index, task = tasks[taken]
        try:
            values[index] = task()
        except Exception as error:  # kept, and raised in order by map_forked
            errors[index] = error
    return values, errors


def _receive(queue, workers) -> dict:
    """Every value the workers sent, until each has said it is done (or has died)."""
    from queue import Empty

    values, waiting = {}, {worker.pid for worker in workers}
    while waiting:
        try:
            kind, payload = queue.get(timeout=0.05)
        except Empty:
            waiting = {worker.pid for worker in workers if worker.pid in waiting and worker.is_alive()}
            continue
        if kind == _DONE:
            waiting.discard(payload)
        elif isinstance(payload, bytes):
            try:
                values[kind] = pickle.loads(payload)
            except Exception:  # noqa: BLE001 - a value that does not come back is computed here
                pass
    return values


def _worker(tasks, counter, queue) -> None:
    """A forked worker: run tasks from the shared counter and send each success back."""
    _exit_with_parent()
    try:
        while (taken := _take(counter)) < len(tasks):
            index, task = tasks[taken]
            try:
                # Pickled here, not in the queue's thread, so a value that cannot be sent is
                # a failure of this task (computed again by the parent), never lost output.
                payload = pickle.dumps(task(), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - the parent runs it again and raises the real error
                payload = _FAILED
            queue.put((index, payload))
        queue.put((_DONE, os.getpid()))
        queue.close()
        queue.join_thread()
    finally:
        # Leave at once: no atexit handler or buffered output of the parent's copy runs twice.
        os._exit(0)


def _exit_with_parent() -> None:
    """End this worker when its parent is gone (killed by a time limit); never run on alone."""
    parent = os.getppid()

    def watch():
        import time

        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
