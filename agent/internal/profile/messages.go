package profile

// The words of a refusal: every problem the schema finds, worded as the Python side words it (wirespeed.profile's
// messages module; tests/vectors/profiles.json holds both's exact text), with the allow-list's typo suggestion.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one reason a profile was rejected.
type Problem struct {
	Pointer string // JSON pointer to the offending field ("" for the document)
	Message string // names the value and what is allowed
}

// Error lists every problem found; nothing from the profile is used when it is returned.
type Error struct {
	Source   string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid profile %s:", e.Source)
	for _, p := range e.Problems {
		ptr := p.Pointer
		if ptr == "" {
			ptr = "/"
		}
		fmt.Fprintf(&b, " %s: %s;", ptr, p.Message)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// problems flattens a validation error tree into one problem per bad field, preferring the leaf that says
// what is wrong with the value over the anyOf wrapper around it.
func problems(ve *jsonschema.ValidationError, doc any) []Problem {
	var out []Problem
	seen := map[string]bool{}
	refused := map[string]string{} // pointer of a field the section's kind refuses -> that message
	var walk func(e *jsonschema.ValidationError, parent []string)
	walk = func(e *jsonschema.ValidationError, parent []string) {
		if _, ok := e.ErrorKind.(*kind.PropertyNames); ok {
			e.Causes = nil // the cause repeats the name's pattern at a location relative to the name
			// jsonschema v6.0.3 gives propertyNames errors its live location slice (validator.go, no
			// clone), which later siblings overwrite; the enclosing error is at the same object, cloned.
			e.InstanceLocation = parent
		}
		if len(e.Causes) > 0 {
			causes := e.Causes
			if _, ok := e.ErrorKind.(*kind.AnyOf); ok {
				causes = withoutNullAlternative(causes)
			}
			for _, c := range causes {
				walk(c, e.InstanceLocation)
			}
			return
		}
		for _, p := range describe(e, doc) {
			if _, ok := e.ErrorKind.(*kind.Not); ok {
				refused[p.Pointer] = p.Message
			}
			key := p.Pointer + "\x00" + p.Message
			if !seen[key] {
				seen[key] = true
				out = append(out, p)
			}
		}
	}
	walk(ve, nil)
	// A refused field is refused whatever its value: saying also that the value is out of range would tell
	// the user to fix a field they must remove (wirespeed.profile checks the kind first, too).
	out = slices.DeleteFunc(out, func(p Problem) bool {
		m, ok := refused[p.Pointer]
		return ok && p.Message != m
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// withoutNullAlternative drops "want null" from `anyOf: [X, null]` failures: the user meant X.
func withoutNullAlternative(causes []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	var kept []*jsonschema.ValidationError
	for _, c := range causes {
		if t, ok := c.ErrorKind.(*kind.Type); ok && len(t.Want) == 1 && t.Want[0] == "null" {
			continue
		}
		kept = append(kept, c)
	}
	if len(kept) == 0 {
		return causes
	}
	return kept
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(escape(s))
	}
	return b.String()
}

// escape makes one JSON pointer reference token (RFC 6901).
func escape(token string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(token) }

func lookup(doc any, loc []string) any {
	for _, s := range loc {
		switch t := doc.(type) {
		case map[string]any:
			doc = t[s]
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			doc = t[i]
		default:
			return nil
		}
	}
	return doc
}

// show renders a value of the document as JSON, as the Python library does (wirespeed.profile), so both
// say the same thing about the same document: integral numbers as integers (Pulumi's 65537.0 is 65537),
// no HTML escaping.
func show(v any) string {
	v = integral(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return groupThousands(r.Num().String())
	}
	return r.FloatString(3)
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// schemaAt compiles (from the compiler's cache) the subschema whose keyword failed, so a message can state
// the whole allowed range or pattern, like the Python side does. The compiler is not safe for concurrent use.
func schemaAt(schemaLoc string) *jsonschema.Schema {
	compilerMu.Lock()
	defer compilerMu.Unlock()
	s, err := compiler.Compile(schemaLoc)
	if err != nil {
		return nil
	}
	return s
}

// An interface glob that path.Match would report as ErrBadPattern (and then match no link) is refused by the
// schema's pattern (wirespeed.profile.GLOB_PATTERN) with the shared table's "glob" message.
const globPatternPrefix = `^(?:[^\[\\]|\\.|\[`

// describe words one failed keyword the way wirespeed.profile does (tests/vectors/profiles.json holds
// the exact messages both must give): "<pointer>: is required", "<pointer>: is not a known field", or
// "<pointer>: <value as JSON> is not allowed: <what is>".
func describe(e *jsonschema.ValidationError, doc any) []Problem {
	ptr := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []Problem
		for _, name := range k.Missing {
			out = append(out, Problem{Pointer: ptr + "/" + escape(name), Message: say("required")})
		}
		return out
	case *kind.AdditionalProperties:
		return unknownFields(e, k, ptr)
	case *kind.PropertyNames:
		pattern := "?"
		if s := schemaAt(e.SchemaURL); s != nil && s.Pattern != nil {
			pattern = s.Pattern.String()
		}
		return []Problem{{Pointer: ptr + "/" + escape(k.Property), Message: mustMatch(k.Property, pattern)}}
	}
	value := lookup(doc, e.InstanceLocation)
	message := say("not_allowed", "value", show(value), "allowed", quotedNumber(value, allowed(e)))
	return []Problem{{Pointer: ptr, Message: message}}
}

// quotedNumber adds the fix to a number field's refusal of a string ("32768"): write it without quotes, as
// wirespeed.problems.quoted_number words it for every JSON input. Any other refusal is returned as it is.
func quotedNumber(value any, allowed string) string {
	text, isString := value.(string)
	if !isString || (allowed != mustBeTypes("integer") && allowed != mustBeTypes("number")) {
		return allowed
	}
	return say("quoted_number", "must", allowed, "text", text)
}

// mustMatch refuses a name for its spelling: `"X" is not allowed: must match PATTERN`.
func mustMatch(name, pattern string) string {
	return say("not_allowed", "value", show(name), "allowed", say("must_match", "pattern", pattern))
}

// unknownFields words the fields an object does not know. An object whose keys follow a pattern (rings by
// driver name) rejects a key for its spelling instead.
func unknownFields(e *jsonschema.ValidationError, k *kind.AdditionalProperties, ptr string) []Problem {
	var pattern string
	var known []string
	if s := schemaAt(e.SchemaURL); s != nil {
		if len(s.PatternProperties) == 1 {
			for re := range s.PatternProperties {
				pattern = re.String()
			}
		}
		for name := range s.Properties {
			known = append(known, name)
		}
	}
	var out []Problem
	for _, name := range k.Properties {
		p := Problem{Pointer: ptr + "/" + escape(name), Message: say("unknown_field", "hint", didYouMean(name, known))}
		switch {
		case strings.HasSuffix(e.SchemaURL, sysctlsSchema):
			p.Message = unknownSysctl(name)
		case pattern != "":
			p.Message = mustMatch(name, pattern)
		}
		out = append(out, p)
	}
	return out
}

// The sysctls section is an allow-list (the schema's properties, generated from wirespeed.profile.Sysctls): a
// name outside it is refused with the list and, for a likely typo, the name meant.
const sysctlsSchema = "#/$defs/Sysctls"

// suggestWithinEdits is the shared table's bound on a "did you mean" (wirespeed.problems.SUGGEST_WITHIN_EDITS).
var suggestWithinEdits = messages.SuggestWithinEdits

// KnownSysctls lists every sysctl a profile may set, sorted, read from the embedded schema.
var KnownSysctls = knownSysctls(schemaJSON)

// knownSysctls panics only if the embedded schema (a build input, covered by tests) lacks the section.
func knownSysctls(schema []byte) []string {
	var doc struct {
		Defs struct {
			Sysctls struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"Sysctls"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		panic(fmt.Sprintf("embedded profile schema: %v", err))
	}
	if len(doc.Defs.Sysctls.Properties) == 0 {
		panic("embedded profile schema: $defs.Sysctls has no properties")
	}
	names := make([]string, 0, len(doc.Defs.Sysctls.Properties))
	for name := range doc.Defs.Sysctls.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// unknownSysctl words the refusal of a sysctl outside the allow-list as wirespeed.profile.unknown_sysctl does.
func unknownSysctl(name string) string {
	hint := ""
	if near := nearestSysctl(name); near != "" {
		hint = say("sysctl_hint", "near", show(near))
	}
	return say("unknown_sysctl", "name", show(name), "count", strconv.Itoa(len(KnownSysctls)), "hint", hint,
		"names", strings.Join(KnownSysctls, messages.ListSeparator))
}

// nearestSysctl is the known sysctl name is most likely a typo of (fewest edits, then alphabetical), or "".
func nearestSysctl(name string) string {
	best, bestDistance := "", suggestWithinEdits+1
	for _, known := range KnownSysctls { // sorted: the first at the smallest distance wins a tie
		if d := editDistance(name, known); d < bestDistance {
			best, bestDistance = known, d
		}
	}
	return best
}

// didYouMean is ` (did you mean "sysctls"?)` for a field name within suggestWithinEdits of a known one (fewest
// edits, then alphabetical; a leading / or . not counted), else empty: wirespeed.problems.did_you_mean.
func didYouMean(name string, known []string) string {
	bare := strings.TrimLeft(name, "/.")
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	best, bestDistance := "", suggestWithinEdits+1
	for _, k := range sorted {
		if d := editDistance(bare, k); d < bestDistance {
			best, bestDistance = k, d
		}
	}
	// Fewer edits than the name is long: otherwise any short name "suggests" a rewrite of it (// -> mtu).
	if best == "" || best == name || bestDistance >= len([]rune(bare)) {
		return ""
	}
	return say("did_you_mean", "near", best)
}

// editDistance is the Levenshtein distance by code point (wirespeed.profile.edit_distance).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	previous := make([]int, len(rb)+1)
	for j := range previous {
		previous[j] = j
	}
	for i, ca := range ra {
		current := make([]int, len(rb)+1)
		current[0] = i + 1
		for j, cb := range rb {
			substitute := previous[j]
			if ca != cb {
				substitute++
			}
			current[j+1] = min(previous[j+1]+1, current[j]+1, substitute)
		}
		previous = current
	}
	return previous[len(rb)]
}

// allowed is the "what is" half of a message about a value.
func allowed(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Minimum, *kind.Maximum, *kind.MultipleOf:
		s := schemaAt(e.SchemaURL)
		// A bound one kind of outbound section adds (public_ips: an Azure NAT gateway's most IPs, an AWS
		// regional gateway's per AZ) is a schema of bounds alone, whose description names the kind:
		// "... with kind "x"".
		if s != nil && s.Types == nil && s.Description != "" {
			return allowedRange(s) + " " + s.Description
		}
		return allowedRange(s)
	case *kind.Type:
		return mustBeTypes(k.Want...)
	case *kind.Pattern:
		if strings.HasPrefix(k.Want, globPatternPrefix) {
			return say("glob")
		}
		return say("must_match", "pattern", k.Want)
	case *kind.Const:
		return say("must_be", "what", show(k.Want))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = show(w)
		}
		return say("must_be_one_of", "values", strings.Join(want, messages.ListSeparator))
	case *kind.MinItems:
		return say("at_least_items", "count", plural(k.Want, "item"))
	case *kind.MaxItems:
		return say("at_most_items", "count", plural(k.Want, "item"))
	case *kind.MinLength:
		return say("at_least_long", "count", plural(k.Want, "character"))
	case *kind.MaxLength:
		return say("at_most_long", "count", plural(k.Want, "character"))
	case *kind.Format:
		if k.Want == cidrFormat {
			return say("cidr")
		}
	case *kind.Not:
		// A field one kind of outbound section refuses: the schema says which kinds take it.
		if s := schemaAt(e.SchemaURL); s != nil && s.Description != "" {
			return s.Description
		}
	}
	return e.ErrorKind.LocalizedString(message.NewPrinter(language.English))
}

// allowedRange states a whole range (and its step), whichever bound or step the value missed, as the Python
// side does: "must be between 1 and 100", "must be a multiple of 8 between 8 and 64,000".
func allowedRange(s *jsonschema.Schema) string {
	lo, hi, step := "?", "?", ""
	if s != nil {
		lo, hi = ratString(s.Minimum), ratString(s.Maximum)
		if s.MultipleOf != nil {
			step = say("range_step", "step", ratString(s.MultipleOf))
		}
	}
	return say("range", "step", step, "low", lo, "high", hi)
}
