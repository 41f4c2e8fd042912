package nbisim

import (
	"testing"

	"github.com/osmops/osmops/internal/nbisim/python"
)

func mustParse(t *testing.T, text string) any {
	t.Helper()
	value, err := python.ParseJSON([]byte(text))
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return value
}

func TestSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema *schema
		body   string
		want   string
	}{
		{"valid action", nsActionSchema, `{"primitive":"upgrade","primitive_params":{}}`, ""},
		{"missing required", nsActionSchema, `{"primitive_params":{}}`, "Format error  ''primitive' is a required property' "},
		{"type", nsActionSchema, `{"primitive":"upgrade","primitive_params":[1]}`, "Format error at 'primitive_params' '[1] is not of type 'object'' "},
		{"shallowest first", nsActionSchema, `{"primitive":"","x":1}`, "Format error  ''primitive_params' is a required property' "},
		{"additional properties", nsTerminateSchema, `{"a":1,"b":2}`, "Format error  'Additional properties are not allowed ('a', 'b' were unexpected)' "},
		{"minimum", nsTerminateSchema, `{"timeout_ns_terminate":0}`, "Format error at 'timeout_ns_terminate' '0 is less than the minimum of 1' "},
		{"too short", nsActionSchema, `{"primitive":"","primitive_params":{}}`, "Format error at 'primitive' ''' is too short' "},
		{"not enough properties", nsInstantiateSchema, `{"nsName":"a","nsdId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17","vimAccountId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17","additionalParamsForVnf":[{"member-vnf-index":"m"}]}`,
			"Format error at 'additionalParamsForVnf:0' '{'member-vnf-index': 'm'} does not have enough properties' "},
		{"pattern", nsInstantiateSchema, `{"nsName":"a,b","nsdId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17","vimAccountId":"0b5ae4d6-51a3-4e18-b7df-868c115dcb17"}`,
			`Format error at 'nsName' ''a,b' does not match '^[^,;()\'"]+$'' `},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			problem := test.schema.validate(mustParse(t, test.body))
			got := ""
			if problem != nil {
				got = problem.formatError()
			}
			if got != test.want {
				t.Errorf("got  %q\nwant %q", got, test.want)
			}
		})
	}
}
