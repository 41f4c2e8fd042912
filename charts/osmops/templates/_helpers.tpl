{{/* The prefix of every object's name: the release name, or "osmops" within it. */}}
{{- define "osmops.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "osmops.labels" -}}
app.kubernetes.io/name: osmops
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The labels that select the manager's pods, as config/manager sets them. */}}
{{- define "osmops.selectorLabels" -}}
app.kubernetes.io/name: osmops
control-plane: controller-manager
{{- end -}}

{{- define "osmops.serviceAccountName" -}}
{{ include "osmops.fullname" . }}-controller-manager
{{- end -}}
