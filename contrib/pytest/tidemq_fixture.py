"""pytest fixtures that run tidemq for a test session.

Copy this file next to your tests (or put its directory on sys.path) and
import its fixtures in conftest.py::

    from tidemq_fixture import tidemq, tidemq_session  # noqa: F401

Then a test asks for them::

    def test_orders(tidemq_session):
        sqs = tidemq_session.client("sqs")   # endpoint, region and keys set
        url = sqs.create_queue(QueueName="orders")["QueueUrl"]

``tidemq`` starts the ``tidemq`` binary once per session (``$TIDEMQ_BINARY``,
else ``tidemq`` on ``$PATH``) with ``serve --in-memory`` on a free loopback
port, waits until ``GET /health`` answers 200, and stops it at the end of
the session. The server keeps its queues for the whole session: give each
test its own queue names. It runs on the real clock (timeouts pass in real
time), so give the queues of a test short visibility timeouts.

``tidemq_session`` is a boto3 Session whose clients talk to that server:
``client(...)`` and ``resource(...)`` get its endpoint unless they are
given one.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import boto3
import pytest

__all__ = ["TidemqServer", "tidemq", "tidemq_session"]

ACCESS_KEY = "tidemq"
SECRET_KEY = "tidemq"
START_TIMEOUT = 30  # seconds for /health to answer after the start


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _EndpointSession(boto3.Session):
    """A boto3 Session whose clients and resources default to one endpoint."""

    def __init__(self, endpoint, **kwargs):
        super().__init__(**kwargs)
        self._endpoint = endpoint

    def client(self, *args, **kwargs):
        kwargs.setdefault("endpoint_url", self._endpoint)
        return super().client(*args, **kwargs)

    def resource(self, *args, **kwargs):
        kwargs.setdefault("endpoint_url", self._endpoint)
        return super().resource(*args, **kwargs)


class TidemqServer:
    """A running ``tidemq serve --in-memory``: its endpoint and process."""

    def __init__(self, binary, region="us-east-1", extra_args=()):
        self.binary = binary
        self.region = region
        self.extra_args = list(extra_args)
        self.process = None
        self.endpoint = None
        self._log = None

    def start(self):
        # A port found free may be taken before the server binds it: try
        # a few.
        last = None
        for _ in range(3):
            port = _free_port()
            self._log = tempfile.TemporaryFile()
            self.process = subprocess.Popen(
                [self.binary, "serve", "--in-memory", "--listen", "127.0.0.1:%d" % port,
                 "--region", self.region] + self.extra_args,
                stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
            self.endpoint = "http://127.0.0.1:%d" % port
            try:
                self._wait_healthy()
                return self
            except RuntimeError as e:
                last = e
                self.stop()
        raise last

    def _wait_healthy(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("tidemq exited with status %d:\n%s" % (self.process.returncode, self.log()))
            try:
                with urllib.request.urlopen(self.endpoint + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.05)
        raise RuntimeError("tidemq did not answer %s/health within %ds:\n%s" % (self.endpoint, START_TIMEOUT, self.log()))

    def log(self):
        """What the server wrote so far (its log lines)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def session(self):
        """A boto3 Session for this server (static keys, its region)."""
        return _EndpointSession(self.endpoint, aws_access_key_id=ACCESS_KEY,
                                aws_secret_access_key=SECRET_KEY, region_name=self.region)

    def stop(self):
        """Stops the server: SIGTERM, then SIGKILL after 10 seconds."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def _binary():
    b = os.environ.get("TIDEMQ_BINARY") or shutil.which("tidemq")
    if not b:
        raise RuntimeError("the tidemq fixture needs the tidemq binary: set TIDEMQ_BINARY or put tidemq on PATH "
                           "(go install github.com/tidemq/tidemq/cmd/tidemq@latest)")
    return b


@pytest.fixture(scope="session")
def tidemq():
    """A tidemq server for the session (see the module's documentation)."""
    server = TidemqServer(_binary()).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def tidemq_session(tidemq):
    """A boto3 Session whose clients talk to the session's tidemq."""
    return tidemq.session()
