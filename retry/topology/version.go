package topology

import (
	"strconv"
	"strings"
)

// VersionAtLeast reports whether a RabbitMQ version ("4.3.6") is at least
// major.minor; an unreadable version is not.
func VersionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	ma, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	mi := 0
	if len(parts) > 1 {
		digits := strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
		if mi, err = strconv.Atoi(digits); err != nil {
			return false
		}
	}
	return ma > major || (ma == major && mi >= minor)
}

// CarriesDeaths reports whether a broker of this version restarts x-death
// on a re-published message (4.0 and later), so ladder must carry it.
func CarriesDeaths(brokerVersion string) bool { return VersionAtLeast(brokerVersion, 4, 0) }

// DelayedExchangesGone reports whether the delayed-message exchange plugin
// no longer exists for this version (4.3 and later): a delay never goes
// through one there, even if an exchange of that type is still listed.
func DelayedExchangesGone(brokerVersion string) bool { return VersionAtLeast(brokerVersion, 4, 3) }

// AtLeastOnceDeadLetters reports whether quorum queues of this version
// can dead-letter at least once (x-dead-letter-strategy, 3.10 and later,
// which also brought message TTL to quorum queues).
func AtLeastOnceDeadLetters(brokerVersion string) bool { return VersionAtLeast(brokerVersion, 3, 10) }
