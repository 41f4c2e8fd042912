package nbisim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxControlAnswerBytes bounds what ControlClient reads of an answer; the state dump of
// 10,000 NS instances is a few MB.
const maxControlAnswerBytes = 256 << 20

// ControlClient calls the control API (/sim/v1) of a simulator that runs in another process,
// such as cmd/osm-nbi-sim, over plain HTTP and JSON.
type ControlClient struct {
	// URL is the simulator's base URL (the NBI is under URL+"/osm").
	URL        string
	HTTPClient *http.Client
}

// Call sends in as JSON (nil: no body) to method and path (under URL) and decodes the JSON
// answer into out (nil: the answer is dropped). A status other than 2xx is an error that
// quotes the answer.
func (c ControlClient) Call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		encoded, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(encoded)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("simulator %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxControlAnswerBytes))
	if err != nil {
		return fmt.Errorf("simulator %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("simulator %s %s: %s: %s", method, path, resp.Status, answer)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("simulator %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}
