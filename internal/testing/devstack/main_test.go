package devstack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
)

// The test binary doubles as the program the Process tests run: with helperModeEnv set it
// plays a stack process instead of running the tests.
const (
	helperModeEnv = "DEVSTACK_TEST_HELPER"
	helperAddrEnv = "DEVSTACK_TEST_HELPER_ADDR"
	// helperServe serves 200 OK on helperAddrEnv until it is signalled.
	helperServe = "serve"
	// helperFail prints helperFailure and exits, as a program with a bad flag does.
	helperFail    = "fail"
	helperFailure = "helper: unknown flag --bogus"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperModeEnv) {
	case helperServe:
		err := http.ListenAndServe(os.Getenv(helperAddrEnv), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		fmt.Println(err)
		os.Exit(1)
	case helperFail:
		fmt.Println(helperFailure)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
