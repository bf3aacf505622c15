"""The templates of a small web app, a Deployment and its Service both named ``<release>-web``, for
the tests that install a chart on the simulator (its own Helm tests and chartsvc's)."""

from __future__ import annotations

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: {{ .Values.replicas | default 1 }}
  selector:
    matchLabels: {app: {{ .Release.Name }}-web}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports: [{containerPort: 80}]
"""
SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector: {app: {{ .Release.Name }}-web}
  ports: [{port: 80, targetPort: 80}]
"""
