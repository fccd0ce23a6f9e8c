# A Python Lambda handler as a user writes it, for lambdart's tests and
# the e2e tests: a body "fail" is reported in batchItemFailures, "error"
# raises, "exit" ends the process, "sleep" outlasts any timeout, "env"
# answers with the context and environment the handler sees.
import os
import time

started = time.time_ns()


def handler(event, context):
    failures = []
    for record in event["Records"]:
        body = record["body"]
        if body == "fail":
            failures.append({"itemIdentifier": record["messageId"]})
        elif body == "error":
            raise ValueError("the batch failed on purpose")
        elif body == "exit":
            os._exit(4)
        elif body == "sleep":
            time.sleep(60)
        elif body == "env":
            return {
                "requestId": context.aws_request_id,
                "functionName": context.function_name,
                "functionArn": context.invoked_function_arn,
                "memory": context.memory_limit_in_mb,
                "remaining": context.get_remaining_time_in_millis(),
                "logGroup": context.log_group_name,
                "logStream": context.log_stream_name,
                "handler": os.environ.get("_HANDLER"),
                "region": os.environ.get("AWS_REGION"),
                "taskRoot": os.environ.get("LAMBDA_TASK_ROOT"),
                "greeting": os.environ.get("GREETING"),
                "trace": os.environ.get("_X_AMZN_TRACE_ID"),
                "started": started,
                "pid": os.getpid(),
            }
        else:
            print("processed", record["messageId"])
    return {"batchItemFailures": failures}


def not_json(event, context):
    return {1, 2, 3}
