// Command chart-package packages the Helm chart for a release, as `helm package --version
// --app-version` does, with Helm's own Go module so that a release needs no helm binary: the
// chart's version is the release's without its "v", its appVersion (the default image tag) the
// release itself. It prints the path of the .tgz.
//
// A release tool: it imports no osmops package, and none imports it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

func main() {
	version := flag.String("version", "", "the release, vX.Y.Z")
	out := flag.String("out", ".", "the folder to write the .tgz into")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: chart-package --version=vX.Y.Z [--out=DIR] CHART_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || !strings.HasPrefix(*version, "v") {
		flag.Usage()
		os.Exit(2)
	}
	if err := packageChart(flag.Arg(0), *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "chart-package:", err)
		os.Exit(1)
	}
}

func packageChart(dir, version, out string) error {
	chart, err := loader.Load(dir)
	if err != nil {
		return err
	}
	chart.Metadata.Version = strings.TrimPrefix(version, "v")
	chart.Metadata.AppVersion = version
	if err := chart.Validate(); err != nil {
		return err
	}
	path, err := chartutil.Save(chart, out)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
