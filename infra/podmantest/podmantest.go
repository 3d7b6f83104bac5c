// Package podmantest gives tests the Podman service that
// scripts/install-podman.sh provides (the REST API on
// unix:///run/podman/podman.sock, or the URI in CAIRN_PODMAN_URL), the
// local base image it builds, the Jupyter image scripts/build-images.sh
// builds, and an image to pull from a registry served by the test itself
// (RegistryImage: no other registry is reachable here).
//
// Without the service or the image, tests fail when CI=true and are skipped
// loudly otherwise: the skip is also appended to the file named by
// CAIRN_TEST_SKIP_REPORT so `make test` can print which suites did not run.
//
// It checks the service with a plain HTTP ping, so it does not depend on
// the podman bindings or the runtime adapter it serves.
package podmantest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"
)

const (
	// EnvURL is the variable that names the test service.
	EnvURL = "CAIRN_PODMAN_URL"
	// DefaultURL is where scripts/install-podman.sh starts the service.
	DefaultURL = "unix:///run/podman/podman.sock"
	// EnvImage names the base image; scripts/install-podman.sh reads the
	// same variable.
	EnvImage = "CAIRN_BASE_IMAGE"
	// DefaultImage is the busybox image scripts/install-podman.sh builds
	// (sh, echo, sleep, cat, ...).
	DefaultImage = "localhost/cairn/base:latest"

	// apiVersion prefixes libpod endpoints (the service routes them only
	// with a version); 4.0.0 is the oldest Podman Cairn supports.
	apiVersion = "v4.0.0"
)

// URL returns the URI of a Podman service that answers, or ends the test:
// t.Fatal with CI=true, a loud t.Skip otherwise.
func URL(t testing.TB) string {
	t.Helper()
	uri := os.Getenv(EnvURL)
	if uri == "" {
		uri = DefaultURL
	}
	if err := ping(uri); err != nil {
		unavailable(t, fmt.Sprintf("podman service %s does not answer: %v", uri, err))
	}
	return uri
}

// Image returns the base image reference after checking that the service
// at uri has it, or ends the test like URL.
func Image(t testing.TB, uri string) string {
	t.Helper()
	ref := os.Getenv(EnvImage)
	if ref == "" {
		ref = DefaultImage
	}
	present(t, uri, ref)
	return ref
}

// PythonImage is the Jupyter image scripts/build-images.sh builds
// (python3, numpy, Jupyter started by its entrypoint).
const PythonImage = "localhost/cairn/python:latest"

// EnvImagesBuildDone names a file that appears once a build of the local
// images, started in the background by scripts/test.sh, has ended (it
// holds the build's exit status): the tests that need those images wait
// for it, while every other suite runs during the build.
const EnvImagesBuildDone = "CAIRN_IMAGES_BUILD_DONE"

// imagesBuildWait bounds the wait for a background build of the images.
const imagesBuildWait = 40 * time.Minute

// Python returns PythonImage after checking that the service at uri has
// it, or ends the test like URL. While a background build runs
// (EnvImagesBuildDone), it waits for the build to end first.
func Python(t testing.TB, uri string) string {
	t.Helper()
	waitForImagesBuild(t)
	present(t, uri, PythonImage)
	return PythonImage
}

// waitForImagesBuild waits until the file EnvImagesBuildDone names
// exists, if the variable is set.
func waitForImagesBuild(t testing.TB) {
	t.Helper()
	done := os.Getenv(EnvImagesBuildDone)
	if done == "" {
		return
	}
	start := time.Now()
	logged := false
	for {
		if _, err := os.Stat(done); err == nil {
			if logged {
				t.Logf("the images' build ended after %s of waiting", time.Since(start).Round(time.Second))
			}
			return
		}
		if time.Since(start) > imagesBuildWait {
			unavailable(t, fmt.Sprintf("the background build of the local images has not ended after %s", imagesBuildWait))
		}
		if !logged {
			t.Logf("waiting for the background build of the local images (scripts/build-images.sh)")
			logged = true
		}
		time.Sleep(2 * time.Second)
	}
}

// present ends the test like URL unless the service at uri has ref.
func present(t testing.TB, uri, ref string) {
	t.Helper()
	client, base, err := clientFor(uri)
	if err != nil {
		unavailable(t, err.Error())
	}
	resp, err := get(client, base+"/"+apiVersion+"/libpod/images/"+ref+"/exists")
	if err != nil {
		unavailable(t, fmt.Sprintf("podman service %s: %v", uri, err))
	}
	if resp != http.StatusNoContent {
		unavailable(t, fmt.Sprintf("image %s is not present on %s (status %d)", ref, uri, resp))
	}
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("Podman suite %s NOT RUN: %s (run scripts/install-podman.sh as root, which installs podman, starts the service and builds %s, then scripts/build-images.sh for %s; or point %s at a service)", t.Name(), why, DefaultImage, PythonImage, EnvURL)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	if path := os.Getenv("CAIRN_TEST_SKIP_REPORT"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, msg)
			f.Close()
		}
	}
	t.Skip(msg)
}

func ping(uri string) error {
	client, base, err := clientFor(uri)
	if err != nil {
		return err
	}
	code, err := get(client, base+"/_ping")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("ping answered %d", code)
	}
	return nil
}

// clientFor returns an HTTP client and base URL for a unix:// or tcp://
// service URI.
func clientFor(uri string) (*http.Client, string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, "", fmt.Errorf("%s=%q: %w", EnvURL, uri, err)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	switch u.Scheme {
	case "unix":
		sock := u.Path
		client.Transport = &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", sock)
			},
		}
		return client, "http://d", nil
	case "tcp":
		return client, "http://" + u.Host, nil
	}
	return nil, "", fmt.Errorf("%s=%q: only unix:// and tcp:// services can be checked", EnvURL, uri)
}

func get(client *http.Client, url string) (int, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
