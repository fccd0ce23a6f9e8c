// Package lambdart runs AWS Lambda functions on this machine, unmodified
// and without Docker: it implements the server side of the Lambda Runtime
// API (version 2018-06-01, the HTTP API a runtime finds at
// AWS_LAMBDA_RUNTIME_API) and manages the processes of a function's
// runtime, one invocation at a time each.
//
// Runtimes: provided, provided.al2 and provided.al2023 (an executable
// named bootstrap in the code directory, such as a Go binary built with
// github.com/aws/aws-lambda-go), go1.x (the executable the Handler names)
// and python3.x (a Handler "module.function" run by a small bootstrap,
// embedded here, that needs only the standard library).
//
// A Pool holds up to N processes of one function. Each has its own
// Runtime API, on 127.0.0.1 and a port of its own, so a process can only
// answer its own invocations. Processes start when an invocation needs
// one and are kept for the next ones, as Lambda keeps an execution
// environment warm. What Lambda does to an environment, a Pool does to a
// process:
//
//   - an invocation's deadline (Lambda-Runtime-Deadline-Ms) is the
//     context's; when it passes, the process is killed and the next
//     invocation starts another (Lambda's "Task timed out");
//   - a process that exits during an invocation fails it
//     (Runtime.ExitError) and is started again for the next one;
//   - an error the runtime reports to /runtime/init/error fails the
//     invocation that started the process, and the process is killed;
//   - an error reported to /runtime/invocation/{id}/error fails that
//     invocation; the process is kept.
//
// What a function writes on its standard output and error goes to the
// Pool's logger, line by line, as Lambda sends it to CloudWatch Logs.
package lambdart
