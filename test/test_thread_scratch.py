"""``thread_scratch``: scratch made once per thread, owner and key, never handed to another thread."""
import threading

from kinematics_py.thread_scratch import MAX_KEPT, thread_scratch


def test_scratch_is_made_once_per_owner_and_key():
    made = []

    def make():
        made.append(object())
        return made[-1]

    first = thread_scratch("test.once", 1, make)
    assert thread_scratch("test.once", 1, make) is first
    assert thread_scratch("test.once", 2, make) is not first
    assert thread_scratch("test.other_owner", 1, make) is not first
    assert len(made) == 3


def test_each_thread_gets_its_own_scratch():
    mine = thread_scratch("test.threads", "k", object)
    theirs = []
    worker = threading.Thread(target=lambda: theirs.append(thread_scratch("test.threads", "k", object)))
    worker.start()
    worker.join()
    assert theirs[0] is not mine
    assert thread_scratch("test.threads", "k", object) is mine


def test_at_most_max_kept_per_owner():
    first = thread_scratch("test.bounded", 0, object)
    for key in range(1, MAX_KEPT + 1):  # one more than kept: all dropped, then made again as asked
        thread_scratch("test.bounded", key, object)
    assert thread_scratch("test.bounded", 0, object) is not first
