# The fixtures, as a user's conftest.py imports them.
from tidemq_fixture import tidemq, tidemq_session  # noqa: F401
