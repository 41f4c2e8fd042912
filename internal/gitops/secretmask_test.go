package gitops

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// naiveMask is what a Mask must do, the slow way: every occurrence of every form masked, the
// overlapping ones as one, and an end of text that starts a form.
func naiveMask(text string, secrets []string) string {
	var forms []string
	for _, secret := range secrets {
		for _, form := range secretForms {
			if text := form(secret); text != "" {
				forms = append(forms, text)
			}
		}
	}
	body, ellipsis := strings.CutSuffix(text, "…")
	masked := make([]bool, len(body))
	for _, form := range forms {
		for start := 0; start+len(form) <= len(body); start++ {
			if strings.HasPrefix(body[start:], form) {
				for i := range len(form) {
					masked[start+i] = true
				}
			}
		}
	}
	tail := 0
	for _, form := range forms {
		for n := min(len(form), len(body)); n > tail; n-- {
			if strings.HasSuffix(body, form[:n]) {
				tail = n
			}
		}
	}
	if tail >= minCutPrefix {
		for i := len(body) - tail; i < len(body); i++ {
			masked[i] = true
		}
	}
	var out strings.Builder
	for i := 0; i < len(body); i++ {
		if !masked[i] {
			out.WriteByte(body[i])
			continue
		}
		out.WriteString(SecretMask)
		for i+1 < len(body) && masked[i+1] {
			i++
		}
	}
	if ellipsis {
		out.WriteString("…")
	}
	return out.String()
}

// A Mask does what the slow way does, whatever the secrets and the text.
func FuzzMask(f *testing.F) {
	f.Add("s3cr\"et", "x", "the s3cr\\\"et and s3c…")
	f.Add("abab", "bab", "ababab abab ba")
	f.Add("aaa", "aa", "aaaaaaa")
	f.Fuzz(func(t *testing.T, first, second, text string) {
		if len(first)+len(second)+len(text) > 4096 {
			t.Skip("the slow way is quadratic")
		}
		secrets := []string{first, second}
		var mask Mask
		if err := mask.Add(secrets[:1]); err != nil {
			t.Skip(err)
		}
		mask.Apply(text) // linked before the second secret comes: it must be linked again
		if err := mask.Add(secrets[1:]); err != nil {
			t.Skip(err)
		}
		if got, want := mask.Apply(text), naiveMask(text, secrets); got != want {
			t.Errorf("Apply(%q) with %q = %q, want %q", text, secrets, got, want)
		}
	})
}

// TestMaskAtItsBound: a Mask holds at most MaxMaskBytes and reads at most maxMaskReadBytes to
// be built; at the bound it holds about 40 bytes of memory per byte (a node and its edge),
// allocates about twice that to be built, and masking a message costs a few allocations
// whatever it holds.
func TestMaskAtItsBound(t *testing.T) {
	random := rand.New(rand.NewPCG(1, 2))
	letters := func(n int) string { // printable and unescaped: one form each
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + random.IntN(26))
		}
		return string(b)
	}
	var secrets []string
	for range MaxMaskBytes/64 + 512 { // past the bound, by more than their shared starts
		secrets = append(secrets, letters(64)) // random: they share only short starts
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var mask Mask
	err := mask.Add(secrets)
	var tooLarge *MaskTooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("Add of %d bytes of distinct secrets: %v, want a MaskTooLargeError", MaxMaskBytes, err)
	}
	if held := len(mask.nodes) - 1; held > MaxMaskBytes {
		t.Errorf("the mask holds %d bytes, more than %d", held, MaxMaskBytes)
	}
	message := "OSM said: " + letters(4000) + secrets[7]
	if got := mask.Apply(message); !strings.HasSuffix(got, SecretMask) { // and linked
		t.Errorf("the last secret added is not masked: %s", got[len(got)-40:])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 96*MaxMaskBytes {
		t.Errorf("building and linking a mask at its bound allocated %d MiB, more than %d", spent>>20, 96*MaxMaskBytes>>20)
	}
	if held := after.HeapAlloc - before.HeapAlloc; held > 48*MaxMaskBytes {
		t.Errorf("a mask at its bound holds %d MiB, more than %d", held>>20, 48*MaxMaskBytes>>20)
	}
	if allocs := testing.AllocsPerRun(10, func() { mask.Apply(message) }); allocs > 4 {
		t.Errorf("masking a message allocates %v times", allocs)
	}

	var reread Mask
	long := letters(MaxMaskBytes / 4)
	for range 8*4 - 1 {
		if err := reread.Add([]string{long}); err != nil {
			t.Fatalf("the same secret added again and again, under the bound read: %v", err)
		}
	}
	if err := reread.Add([]string{long, long + "x"}); !errors.As(err, &tooLarge) {
		t.Errorf("past what a mask reads: %v, want a MaskTooLargeError", err)
	}
}

// A secret longer than a mask holds is refused before its forms (an escaped one is up to six
// times as long) or the mask's nodes are made.
func TestMaskRefusesALongSecretBeforeQuotingIt(t *testing.T) {
	long := strings.Repeat("\x01", MaxMaskBytes+1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var mask Mask
	err := mask.Add([]string{"short", long})
	runtime.ReadMemStats(&after)
	if _, ok := errors.AsType[*MaskTooLargeError](err); !ok {
		t.Fatalf("Add of a secret of %d bytes: %v, want a MaskTooLargeError", len(long), err)
	}
	if spent := after.TotalAlloc - before.TotalAlloc; spent > MaxMaskBytes {
		t.Errorf("refusing a secret too long allocated %d KiB", spent>>10)
	}
}
