// Package container starts tidemq's container image for a test, with
// testcontainers-go, and tells its URL:
//
//	c, err := container.Run(ctx, "tidemq:dev")
//	defer testcontainers.TerminateContainer(c)
//	cfg := c.AWSConfig() // or c.URL with any SDK
//
// It is a Go module of its own (github.com/tidemq/tidemq/tidemqtest/container),
// so that testcontainers-go and the Docker client it brings are a
// dependency of the tests that want a container, not of tidemq. Tests that
// can run tidemq inside the test process should use tidemqtest instead:
// it starts in milliseconds, needs no Docker, and has a fake clock.
//
// The image is tidemq's (deploy/image/build.sh builds it; the README's
// "Container" section). Where no registry can be reached, build it
// locally and set TESTCONTAINERS_RYUK_DISABLED=true: testcontainers-go
// otherwise pulls its reaper image, and it pulls the tidemq image only
// when it is not present.
package container

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Port is the port tidemq serves on inside the container.
const Port = "9324/tcp"

// Container is a running tidemq container.
type Container struct {
	testcontainers.Container
	// URL is where the host reaches the server, e.g.
	// http://127.0.0.1:32768: SQS, SNS, /health and the admin API.
	URL string
	// Region is the server's home region, the region of AWSConfig.
	Region string
}

// Run starts image as an in-memory tidemq (serve --in-memory, nothing
// kept when the container ends), waits until GET /health answers 200, and
// returns its URL. opts customize the request as testcontainers-go's
// options do, e.g. testcontainers.WithCmd to give other serve flags.
func Run(ctx context.Context, image string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image: image,
			// Published on IPv4 only: Docker 20.10 can publish the IPv4 and
			// IPv6 bindings of one port on different host ports, and a
			// client reaching the IPv6 binding's port over IPv4 is refused.
			ExposedPorts: []string{Port},
			HostConfigModifier: func(hc *dockercontainer.HostConfig) {
				hc.PortBindings = network.PortMap{network.MustParsePort(Port): {{HostIP: netip.MustParseAddr("0.0.0.0")}}}
			},
			Cmd: []string{"serve", "--in-memory", "--listen", "0.0.0.0:9324"},
			// The image's own health check, run inside the container.
			WaitingFor: wait.ForExec([]string{"/tidemq", "health", "--endpoint", "http://127.0.0.1:9324", "--timeout", "2s"}).
				WithExitCodeMatcher(func(code int) bool { return code == 0 }),
		},
		Started: true,
	}
	for _, opt := range opts {
		if err := opt.Customize(&req); err != nil {
			return nil, err
		}
	}
	c, err := testcontainers.GenericContainer(ctx, req)
	var out *Container
	if c != nil {
		out = &Container{Container: c, Region: "us-east-1"}
	}
	if err != nil {
		return out, fmt.Errorf("start tidemq (%s): %w", image, err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		return out, fmt.Errorf("tidemq's host: %w", err)
	}
	if host == "localhost" {
		host = "127.0.0.1" // the port is published on IPv4 only
	}
	port, err := c.MappedPort(ctx, Port)
	if err != nil {
		return out, fmt.Errorf("tidemq's port: %w", err)
	}
	out.URL = "http://" + net.JoinHostPort(host, port.Port())
	return out, nil
}

// AWSConfig is an aws-sdk-go-v2 configuration for the container: its
// endpoint, its region and static credentials (the server runs without
// --auth, so any pair works). It reads nothing from the environment.
func (c *Container) AWSConfig() aws.Config {
	return aws.Config{
		Region:       c.Region,
		Credentials:  credentials.NewStaticCredentialsProvider("tidemq", "tidemq", ""),
		BaseEndpoint: aws.String(c.URL),
	}
}
