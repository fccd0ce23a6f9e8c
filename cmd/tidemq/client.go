package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/pflag"
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

// sqsClient builds a client with the standard AWS credential chain. For a
// custom endpoint it skips the EC2 metadata lookup (slow and noisy off
// EC2) and, when the chain has no credentials, signs with placeholders,
// which tidemq accepts unless it runs with --auth; it says so on notes.
func (o *clientOptions) sqsClient(ctx context.Context, notes io.Writer) (*sqs.Client, error) {
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
		return nil, fmt.Errorf("AWS configuration: %w", err)
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
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 256
	transport.DialContext = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	return sqs.NewFromConfig(cfg, func(so *sqs.Options) {
		if o.custom() {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		so.HTTPClient = &http.Client{Transport: transport}
	}), nil
}
