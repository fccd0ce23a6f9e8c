package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/pflag"

	"github.com/tidemq/tidemq/adminclient"
	"github.com/tidemq/tidemq/api/sigv4"
)

// clientOptions are the flags of every command that talks to an SQS
// endpoint, tidemq's or AWS's, and the one place that builds its client.
type clientOptions struct {
	endpoint string
	region   string
	profile  string
}

// register adds --endpoint, --region and --profile. defaultEndpoint "" means
// AWS itself.
func (o *clientOptions) register(f *pflag.FlagSet, defaultEndpoint string) {
	help := "SQS endpoint URL, e.g. http://127.0.0.1:9324; \"aws\" or empty for AWS in --region"
	f.StringVar(&o.endpoint, "endpoint", defaultEndpoint, help)
	f.StringVar(&o.region, "region", "", "AWS region (default: from the AWS config, else us-east-1)")
	f.StringVar(&o.profile, "profile", "", "AWS shared-config profile (credentials come from the standard chain)")
}

// custom reports whether the client talks to an endpoint other than AWS's.
func (o *clientOptions) custom() bool { return o.endpoint != "" && o.endpoint != "aws" }

// awsConfig loads the standard AWS configuration and credential chain. For a
// custom endpoint it skips the EC2 metadata lookup (slow and noisy off
// EC2) and, when the chain has no credentials, signs with placeholders,
// which tidemq accepts unless it runs with --auth; it says so on notes.
func (o *clientOptions) awsConfig(ctx context.Context, notes io.Writer) (aws.Config, error) {
	var loads []func(*awsconfig.LoadOptions) error
	if o.profile != "" {
		loads = append(loads, awsconfig.WithSharedConfigProfile(o.profile))
	}
	if o.region != "" {
		loads = append(loads, awsconfig.WithRegion(o.region))
	}
	if o.custom() {
		loads = append(loads, awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if o.custom() {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if cfg.Credentials == nil {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("tidemq", "tidemq", "")
		} else if _, err := cfg.Credentials.Retrieve(rctx); err != nil {
			if notes != nil {
				fmt.Fprintln(notes, "note: no AWS credentials found; signing with placeholder credentials, which tidemq accepts unless it runs with --auth")
			}
			cfg.Credentials = credentials.NewStaticCredentialsProvider("tidemq", "tidemq", "")
		}
		cancel()
	}
	return cfg, nil
}

// transport is the HTTP transport of every client: the SDK's own (which
// honours AWS_CA_BUNDLE and the proxy settings), with more idle connections
// per host and a short dial timeout.
func transport(cfg aws.Config) http.RoundTripper {
	tune := func(t *http.Transport) {
		t.MaxIdleConnsPerHost = 256
		t.DialContext = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	}
	if bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		return bc.WithTransportOptions(tune).GetTransport()
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	tune(t)
	return t
}

// sqsClient builds an SQS client of the endpoint (see awsConfig).
func (o *clientOptions) sqsClient(ctx context.Context, notes io.Writer) (*sqs.Client, error) {
	cfg, err := o.awsConfig(ctx, notes)
	if err != nil {
		return nil, err
	}
	tr := transport(cfg)
	return sqs.NewFromConfig(cfg, func(so *sqs.Options) {
		if o.custom() {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		so.HTTPClient = &http.Client{Transport: tr}
	}), nil
}

// adminOptions are the flags of the commands that call a tidemq server's
// own API (/tidemq/...): alarms, trigger, top. Their requests are signed
// like SQS calls, for the "tidemq" service, so they pass a server that runs
// with --auth.
type adminOptions struct{ clientOptions }

// register adds --endpoint (a tidemq server), --region and --profile.
func (o *adminOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.endpoint, "endpoint", defaultEndpoint, "base URL of the tidemq server")
	f.StringVar(&o.region, "region", "", "AWS region of the signature (default: from the AWS config, else us-east-1)")
	f.StringVar(&o.profile, "profile", "", "AWS shared-config profile whose credentials sign the requests (default: the standard chain)")
}

// httpClient returns a client that signs every request for the admin API.
func (o *adminOptions) httpClient(ctx context.Context, notes io.Writer) (*http.Client, error) {
	cfg, err := o.awsConfig(ctx, notes)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: &sigv4.Transport{Base: transport(cfg), Credentials: cfg.Credentials,
		Region: cfg.Region, Service: adminService}}, nil
}

// defaultEndpoint is the local tidemq server.
const defaultEndpoint = "http://127.0.0.1:9324"

// client returns an admin API client that signs every request.
func (o *adminOptions) client(ctx context.Context, notes io.Writer) (*adminclient.Client, error) {
	hc, err := o.httpClient(ctx, notes)
	if err != nil {
		return nil, err
	}
	return &adminclient.Client{Endpoint: o.endpoint, HTTP: hc, Timeout: 30 * time.Second}, nil
}

// adminError words an admin API error for the command line: its code and
// the server's message, and for a refused signature a hint about credentials.
func adminError(err error) error {
	var e *adminclient.Error
	if !errors.As(err, &e) {
		return err
	}
	if e.Status == http.StatusForbidden && e.Code != "" && e.Code != "AccessDenied" {
		return fmt.Errorf("%s: %s (the server runs with --auth: sign with its credentials, via AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or --profile)", e.Code, e.Error())
	}
	if e.Code != "" && e.Message != "" { // the code says what to do about it (AccessDenied: ask for the permission)
		return fmt.Errorf("%s: %s", e.Code, e.Error())
	}
	return errors.New(e.Error())
}
