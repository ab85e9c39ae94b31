{{/* Labels every object carries; the first two are also the selector. */}}
{{- define "kubegpu-webhook.selector" -}}
app.kubernetes.io/name: {{ .Values.name }}
app.kubernetes.io/part-of: kubegpu
{{- end -}}

{{- define "kubegpu-webhook.labels" -}}
{{ include "kubegpu-webhook.selector" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kubegpu-webhook.image" -}}
{{- $repository := required "image.repository is required (an image with kubegpu installed)" .Values.image.repository -}}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/*
The memory limit the server's limits can reach, as `kubegpu gen webhook` computes it
(kubegpu.webhook.limits.memory_budget): an idle server (96 MiB), 320 KiB per open connection,
200 bytes per body byte for each review worker, the queued bodies, plus 25 %, rounded up to 32 Mi.
*/}}
{{- define "kubegpu-webhook.memoryLimit" -}}
{{- if .Values.resources.limits.memory -}}
{{- .Values.resources.limits.memory -}}
{{- else -}}
{{- $l := .Values.limits -}}
{{- $body := int64 $l.maxBodyBytes -}}
{{- $total := add 100663296 (mul (int64 $l.maxConnections) 327680) (mul (int64 $l.reviewWorkers) $body 200) (mul (int64 $l.reviewQueue) $body) -}}
{{- $bytes := div (mul $total 5) 4 -}}
{{- $mib := div (add $bytes 1048575) 1048576 -}}
{{- printf "%dMi" (mul (div (add $mib 31) 32) 32) -}}
{{- end -}}
{{- end -}}

{{/* The kubegpu.toml selecting the rules; empty when every rule applies. */}}
{{- define "kubegpu-webhook.rulesConfig" -}}
{{- with .Values.rules.select }}select = {{ toJson . }}
{{ end -}}
{{- with .Values.rules.ignore }}ignore = {{ toJson . }}
{{ end -}}
{{- end -}}
