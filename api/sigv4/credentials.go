package sigv4

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Credentials maps access key ids to secret keys.
type Credentials map[string]string

// add records one pair. An id given twice must come with the same secret.
// Error messages never include a secret.
func (c Credentials) add(id, secret string) error {
	switch {
	case id == "":
		return errors.New("empty access key id")
	case strings.ContainsAny(id, "/:, \t"):
		return fmt.Errorf("access key id %q contains '/', ':', ',' or whitespace", id)
	case secret == "":
		return fmt.Errorf("empty secret for access key id %q", id)
	}
	if old, ok := c[id]; ok && old != secret {
		return fmt.Errorf("access key id %q given twice with different secrets", id)
	}
	c[id] = secret
	return nil
}

// LoadCredentials reads credentials from a file in one of two formats:
//
//   - the AWS shared-credentials INI format: [profile] sections holding
//     aws_access_key_id and aws_secret_access_key. Every profile that has
//     a key pair is taken; profiles without one (aws_session_token, region,
//     role settings and other keys are ignored) are skipped. Lines starting
//     with '#' or ';' are comments;
//   - one "AKID:SECRET" per line, with blank lines and '#' comments.
//
// The file is INI if its first line that is neither blank nor a comment
// starts with '['. Errors give the path and line number. A file with no
// credentials is an error, since it would lock every client out.
func LoadCredentials(path string) (Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var creds Credentials
	if isINI(lines) {
		creds, err = parseINI(path, lines)
	} else {
		creds, err = parsePairLines(path, lines)
	}
	if err != nil {
		return nil, err
	}
	if len(creds) == 0 {
		return nil, fmt.Errorf("%s: no credentials found", path)
	}
	return creds, nil
}

func isComment(line string) bool {
	return strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";")
}

func isINI(lines []string) bool {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || isComment(l) {
			continue
		}
		return strings.HasPrefix(l, "[")
	}
	return false
}

func parsePairLines(path string, lines []string) (Credentials, error) {
	creds := Credentials{}
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		id, secret, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected AKID:SECRET", path, i+1)
		}
		if err := creds.add(strings.TrimSpace(id), strings.TrimSpace(secret)); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
	}
	return creds, nil
}

// iniProfile is the key pair found so far in one [profile] section.
type iniProfile struct {
	name             string
	line             int // of the section header
	id, secret       string
	idLine, secLine  int
	hasID, hasSecret bool
}

func parseINI(path string, lines []string) (Credentials, error) {
	creds := Credentials{}
	var cur *iniProfile
	flush := func() error {
		switch {
		case cur == nil || (!cur.hasID && !cur.hasSecret):
			return nil
		case !cur.hasSecret:
			return fmt.Errorf("%s:%d: profile [%s] has aws_access_key_id but no aws_secret_access_key", path, cur.line, cur.name)
		case !cur.hasID:
			return fmt.Errorf("%s:%d: profile [%s] has aws_secret_access_key but no aws_access_key_id", path, cur.line, cur.name)
		}
		if err := creds.add(cur.id, cur.secret); err != nil {
			return fmt.Errorf("%s:%d: profile [%s]: %w", path, cur.idLine, cur.name, err)
		}
		return nil
	}
	for i, l := range lines {
		n := i + 1
		l = strings.TrimSpace(l)
		if l == "" || isComment(l) {
			continue
		}
		if strings.HasPrefix(l, "[") {
			if !strings.HasSuffix(l, "]") {
				return nil, fmt.Errorf("%s:%d: unterminated section header", path, n)
			}
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &iniProfile{name: strings.TrimSpace(l[1 : len(l)-1]), line: n}
			continue
		}
		key, value, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected [profile] or key = value", path, n)
		}
		if cur == nil {
			return nil, fmt.Errorf("%s:%d: key outside a [profile] section", path, n)
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch key {
		case "aws_access_key_id":
			if cur.hasID {
				return nil, fmt.Errorf("%s:%d: aws_access_key_id repeated in profile [%s] (first on line %d)", path, n, cur.name, cur.idLine)
			}
			cur.id, cur.idLine, cur.hasID = value, n, true
		case "aws_secret_access_key":
			if cur.hasSecret {
				return nil, fmt.Errorf("%s:%d: aws_secret_access_key repeated in profile [%s] (first on line %d)", path, n, cur.name, cur.secLine)
			}
			cur.secret, cur.secLine, cur.hasSecret = value, n, true
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return creds, nil
}

// ParseCredentialPairs parses "AKID:SECRET,AKID2:SECRET2", the form taken by
// a flag or the TIDEMQ_CREDENTIALS environment variable. Spaces around
// entries and empty entries are ignored. An empty list is an error.
func ParseCredentialPairs(s string) (Credentials, error) {
	creds := Credentials{}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, secret, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("credential pair %d: expected AKID:SECRET", i+1)
		}
		if err := creds.add(strings.TrimSpace(id), strings.TrimSpace(secret)); err != nil {
			return nil, fmt.Errorf("credential pair %d: %w", i+1, err)
		}
	}
	if len(creds) == 0 {
		return nil, errors.New("no credentials given")
	}
	return creds, nil
}
