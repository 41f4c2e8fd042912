package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/osm"
)

// DefaultCredentialsExpiryWarning is how long before OSM expires a password or an account an
// OsmCluster warns by default: a week, time for a person to change or renew it.
const DefaultCredentialsExpiryWarning = 7 * 24 * time.Hour

// reportExpiry shows when OSM expires the user's password and account, read from OSM at each
// check, and warns within ExpiryWarning of either: CredentialsExpiring, and a Warning event
// when it becomes True or its message changes (not at every check). A record OSM does not let
// the operator read leaves the last expiry shown; the check itself passed.
func (r *OsmClusterReconciler) reportExpiry(ctx context.Context, obj *gitopsv1alpha1.OsmCluster, checker healthChecker) {
	expiry, err := checker.UserExpiry(ctx)
	if err != nil {
		log.FromContext(ctx).Info("cannot read when OSM expires the credentials", "error", err.Error())
		return
	}
	obj.Status.PasswordExpiresAt = metaTime(expiry.PasswordExpires)
	obj.Status.AccountExpiresAt = metaTime(expiry.AccountExpires)
	reason, message := credentialsExpiring(expiry, r.now(), r.expiryWarning(), obj.Spec.CredentialsSecretRef.Name)
	if reason == "" {
		conditions.Delete(obj, gitopsv1alpha1.CredentialsExpiringCondition)
		return
	}
	if !conditions.IsTrue(obj, gitopsv1alpha1.CredentialsExpiringCondition) ||
		conditions.GetMessage(obj, gitopsv1alpha1.CredentialsExpiringCondition) != message {
		r.Eventf(obj, corev1.EventTypeWarning, reason, "%s", message)
	}
	conditions.MarkTrue(obj, gitopsv1alpha1.CredentialsExpiringCondition, reason, "%s", message)
}

// credentialsExpiring says whether OSM expires the password or the account within warning of
// now, and what a person must do: the reason is "" when neither. An account that expires is
// the reason, before a password, as only an OSM administrator can renew it. The message names
// the Secret, never the user (a value from it), and holds no relative time, so that it changes
// only when OSM's expiry does.
func credentialsExpiring(expiry osm.UserExpiry, now time.Time, warning time.Duration, secret string) (reason, message string) {
	within := func(at time.Time) bool { return !at.IsZero() && at.Sub(now) < warning }
	when := func(at time.Time) string {
		verb := "expires"
		if !at.After(now) {
			verb = "expired"
		}
		return verb + " at " + at.UTC().Format(time.RFC3339)
	}
	var messages []string
	if within(expiry.AccountExpires) {
		reason = gitopsv1alpha1.AccountExpiringReason
		messages = append(messages, fmt.Sprintf("OSM's account of the user of Secret %s %s, when OSM refuses its logins: "+
			"have an OSM administrator renew it", secret, when(expiry.AccountExpires)))
	}
	if within(expiry.PasswordExpires) {
		if reason == "" {
			reason = gitopsv1alpha1.PasswordExpiringReason
		}
		messages = append(messages, fmt.Sprintf("the password in Secret %s %s, when OSM wants it changed: "+
			"change it in OSM, then in the Secret", secret, when(expiry.PasswordExpires)))
	}
	return reason, strings.Join(messages, "; ")
}

func metaTime(at time.Time) *metav1.Time {
	if at.IsZero() {
		return nil
	}
	return &metav1.Time{Time: at}
}

func (r *OsmClusterReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

func (r *OsmClusterReconciler) expiryWarning() time.Duration {
	if r.ExpiryWarning > 0 {
		return r.ExpiryWarning
	}
	return DefaultCredentialsExpiryWarning
}
