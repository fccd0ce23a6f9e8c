package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/pflag"
)

// clientOptions are the flags of every command that talks to an SQS
// endpoint, tidemq's or AWS's.
type clientOptions struct {
	endpoint string
	region   string
	profile  string
}

func (o *clientOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.endpoint, "endpoint", "http://127.0.0.1:9324", "SQS endpoint URL; \"aws\" for AWS's own endpoint in --region")
	f.StringVar(&o.region, "region", "us-east-1", "AWS region")
	f.StringVar(&o.profile, "profile", "", "AWS shared-config profile (credentials come from the standard chain)")
}

// sqsClient builds a client with the standard AWS credential chain. Against
// a non-AWS endpoint without credentials it signs with placeholder keys,
// which tidemq accepts unless it runs with --auth.
func (o *clientOptions) sqsClient(ctx context.Context) (*sqs.Client, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(o.region)}
	if o.profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(o.profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	custom := o.endpoint != "" && o.endpoint != "aws"
	if custom {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("tidemq", "tidemq", "")
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 256
	transport.DialContext = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	return sqs.NewFromConfig(cfg, func(so *sqs.Options) {
		if custom {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		so.HTTPClient = &http.Client{Transport: transport}
	}), nil
}
