# tidemq's runtime for Python Lambda handlers: the loop of the Lambda
# Runtime API (2018-06-01), with the standard library only. tidemq writes
# this file to a temporary directory and runs it with the function's code
# directory as its working directory; _HANDLER is "module.function".
import http.client
import importlib
import json
import logging
import os
import sys
import time
import traceback

API_HOST = os.environ["AWS_LAMBDA_RUNTIME_API"]
API_PATH = "/2018-06-01/runtime"
# One kept-alive connection to the Runtime API, made directly: a proxy the
# function's environment names (HTTP_PROXY) is for the function's own
# calls, and would neither reach the API nor be trusted with the events.
_conn = None


def call(method, path, body=None, headers=None):
    """call sends one request to the Runtime API and returns its status,
    headers and body; a dropped kept-alive connection is made again once."""
    global _conn
    for attempt in (0, 1):
        if _conn is None:
            _conn = http.client.HTTPConnection(API_HOST)
        try:
            _conn.request(method, API_PATH + path, body=body, headers=headers or {})
            resp = _conn.getresponse()
            return resp.status, resp.headers, resp.read()
        except (http.client.HTTPException, OSError):
            _conn.close()
            _conn = None
            if attempt:
                raise


def post(path, body, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    status, _, data = call("POST", path, body, h)
    if status >= 300:
        sys.stderr.write("[ERROR] the Runtime API refused POST %s: %d %s\n" % (path, status, data[:512].decode("utf-8", "replace")))


def error_shape(exc, error_type=None, message=None):
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    return {
        "errorMessage": str(exc) if message is None else message,
        "errorType": error_type or type(exc).__name__,
        "requestId": "",
        "stackTrace": traceback.format_list(frames),
    }


def init_failed(shape):
    sys.stderr.write("[ERROR] %s: %s\n" % (shape["errorType"], shape["errorMessage"]))
    try:
        post("/init/error", json.dumps(shape).encode(),
             {"Lambda-Runtime-Function-Error-Type": shape["errorType"]})
    finally:
        sys.exit(1)


class LambdaContext:
    """The context object Lambda passes to a Python handler."""

    def __init__(self, request_id, deadline_ms, function_arn, trace_id):
        self.aws_request_id = request_id
        self.invoked_function_arn = function_arn
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.identity = None
        self.client_context = None
        self.trace_id = trace_id
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self):
        return max(int(self._deadline_ms - time.time() * 1000), 0)

    def __repr__(self):
        return "LambdaContext([aws_request_id=%s,function_name=%s])" % (self.aws_request_id, self.function_name)


def load_handler(spec):
    module_path, _, name = spec.rpartition(".")
    module_name = module_path.replace("/", ".")
    try:
        module = importlib.import_module(module_name)
    except SyntaxError as exc:
        init_failed(error_shape(exc, "Runtime.UserCodeSyntaxError", "Syntax error in module '%s': %s" % (module_name, exc)))
    except ImportError as exc:
        init_failed(error_shape(exc, "Runtime.ImportModuleError", "Unable to import module '%s': %s" % (module_name, exc)))
    except Exception as exc:
        init_failed(error_shape(exc))
    fn = getattr(module, name, None)
    if fn is None:
        init_failed({"errorMessage": "Handler '%s' missing on module '%s'" % (name, module_name),
                     "errorType": "Runtime.HandlerNotFound", "requestId": "", "stackTrace": []})
    return fn


def main():
    task_root = os.environ.get("LAMBDA_TASK_ROOT", os.getcwd())
    if task_root not in sys.path:
        sys.path.insert(0, task_root)
    # As on Lambda, the root logger has a handler (on standard output) and
    # stays at WARNING until the function lowers it.
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("[%(levelname)s]\t%(asctime)s\t%(message)s"))
    logging.getLogger().addHandler(handler)
    fn = load_handler(os.environ["_HANDLER"])
    while True:
        status, headers, raw = call("GET", "/invocation/next")
        if status != 200:
            sys.stderr.write("[ERROR] the Runtime API gave no invocation: %d %s\n" % (status, raw[:512].decode("utf-8", "replace")))
            sys.exit(1)
        request_id = headers["Lambda-Runtime-Aws-Request-Id"]
        deadline = int(headers.get("Lambda-Runtime-Deadline-Ms") or 0)
        arn = headers.get("Lambda-Runtime-Invoked-Function-Arn")
        trace_id = headers.get("Lambda-Runtime-Trace-Id")
        if trace_id:
            os.environ["_X_AMZN_TRACE_ID"] = trace_id
        else:
            os.environ.pop("_X_AMZN_TRACE_ID", None)
        context = LambdaContext(request_id, deadline, arn, trace_id)
        try:
            event = json.loads(raw) if raw else None
            result = fn(event, context)
        except Exception as exc:
            shape = error_shape(exc)
            sys.stderr.write("[ERROR] %s: %s\n" % (shape["errorType"], shape["errorMessage"]))
            post("/invocation/%s/error" % request_id, json.dumps(shape).encode(),
                 {"Lambda-Runtime-Function-Error-Type": "Unhandled"})
            continue
        try:
            body = json.dumps(result).encode()
        except Exception as exc:
            shape = error_shape(exc, "Runtime.MarshalError", "Unable to marshal response: %s" % exc)
            post("/invocation/%s/error" % request_id, json.dumps(shape).encode(),
                 {"Lambda-Runtime-Function-Error-Type": "Runtime.MarshalError"})
            continue
        post("/invocation/%s/response" % request_id, body)


if __name__ == "__main__":
    main()
