"""``DponeDeliveryPodOperator``: deliver one data interval of a published plan in the executor
image, run by KubernetesPodOperator (the provider's ``cncf-kubernetes`` extra).

The pod runs ``dpone-executor run --plan-digest D --interval-start S --interval-end E
--environment NAME``: its arguments carry the pinned digest, the run's data interval and
locators only. Credentials reach the pod as Kubernetes Secret references (``secrets=[Secret(
"env", "DPONE_CONN_..._TOKEN", "secret-name", "key")]`` or ``Secret("volume", "/path", ...)``),
never as values; the operator refuses ``env_vars``, ``cmds`` and ``arguments``. The container
runs as uid 10001, non-root, with a read-only root filesystem, no privilege escalation and
every capability dropped; its only writable place is the ``emptyDir`` volume at ``/scratch``.

The executor writes its result document to ``/airflow/xcom/return.json``; the XCom sidecar
hands it to this operator. ``completed`` and ``empty`` are the task's XCom; ``pending`` defers
to :class:`~dpone_airflow.triggers.DeliveryReceiptTrigger` and resumes in
``execute_complete`` exactly like :class:`~dpone_airflow.operators.DponeDeliveryOperator` (the
worker resolves the same environment file for the trigger's non-secret journal locator);
``blocked``, ``stopped`` or an error fail the task with the stable code and the commands.

``execute`` runs in the span ``dpone.airflow.execute`` and hands its W3C ``traceparent`` to the
pod as ``TRACEPARENT`` (the executor's spans continue the task's trace). The task's OpenLineage
facets read the plan by digest from the environment's artifact store on the worker.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.cncf.kubernetes.secret import Secret
from kubernetes.client import models as k8s  # type: ignore[import-untyped,unused-ignore]

from dpone_airflow import _stats, _tracing
from dpone_airflow._outcome import from_document
from dpone_airflow.links import check_template
from dpone_airflow.operators import DeliveryContinuation

EXECUTOR_UID: Final = 10001
SCRATCH: Final = "/scratch"
DEFAULT_RESOURCES: Final = k8s.V1ResourceRequirements(
    requests={"cpu": "250m", "memory": "256Mi", "ephemeral-storage": "256Mi"},
    limits={"cpu": "1", "memory": "1Gi", "ephemeral-storage": "2Gi"})
_REFUSED: Final = ("env_vars", "env_from", "cmds", "arguments", "security_context",
                   "container_security_context")


def pod_security_context() -> k8s.V1PodSecurityContext:
    """The pod runs as the executor image's user, never as root."""
    return k8s.V1PodSecurityContext(
        run_as_non_root=True, run_as_user=EXECUTOR_UID, run_as_group=EXECUTOR_UID,
        fs_group=EXECUTOR_UID, seccomp_profile=k8s.V1SeccompProfile(type="RuntimeDefault"))


def container_security_context() -> k8s.V1SecurityContext:
    """Read-only root filesystem, no privilege escalation, every capability dropped."""
    return k8s.V1SecurityContext(
        run_as_non_root=True, run_as_user=EXECUTOR_UID, run_as_group=EXECUTOR_UID,
        read_only_root_filesystem=True, allow_privilege_escalation=False, privileged=False,
        capabilities=k8s.V1Capabilities(drop=["ALL"]))


class DponeDeliveryPodOperator(DeliveryContinuation, KubernetesPodOperator):  # type: ignore[misc,unused-ignore]
    """Deliver the run's data interval of ``plan_digest`` in ``environment`` in the executor image.

    :param plan_digest: ``sha256:<64 hex>`` of a plan published by `dpone plan --publish`.
    :param environment: the environment name the pod passes to ``--environment`` (its
        control-plane file mounted in the image, ``$DPONE_ENVIRONMENTS``) and the worker
        resolves for the receipt trigger (``environments_dir``).
    :param image: the executor image (``containers/executor/Containerfile``).
    :param secrets: Kubernetes Secret references for the plan's credentials (env or volume).
    :param source_root: where a file source resolves inside the pod (``--source-root``).
    :param environments_dir: the worker's directory of environment files.
    Other KubernetesPodOperator arguments (namespace, volumes, ``container_resources``, ...)
    pass through, except those that would carry a credential value or weaken the security
    context.
    """

    template_fields = (*KubernetesPodOperator.template_fields, "plan_digest", "environment")

    def __init__(self, *, plan_digest: str, environment: str, image: str,
                 secrets: Sequence[Secret] = (), source_root: str | None = None,
                 environments_dir: str | None = None,
                 deferral_timeout: dt.timedelta | None = None, delivery_url: str | None = None,
                 **kwargs: Any) -> None:
        refused = sorted(set(_REFUSED) & set(kwargs))
        if refused:
            raise TypeError(f"DponeDeliveryPodOperator sets {', '.join(refused)} itself: "
                            "credentials travel as Kubernetes Secret refs (secrets=[Secret(...)])")
        volumes = [*(kwargs.pop("volumes", None) or ()),
                   k8s.V1Volume(name="scratch", empty_dir=k8s.V1EmptyDirVolumeSource())]
        mounts = [*(kwargs.pop("volume_mounts", None) or ()),
                  k8s.V1VolumeMount(name="scratch", mount_path=SCRATCH)]
        kwargs.setdefault("container_resources", DEFAULT_RESOURCES)
        kwargs["deferrable"] = False  # the pod runs to its end; the receipt defers, not the pod
        arguments = ["run", "--plan-digest", plan_digest,
                     "--interval-start", "{{ data_interval_start | ds }}",
                     "--interval-end", "{{ data_interval_end | ds }}",
                     "--environment", environment, "--format", "json"]
        if source_root:
            arguments += ["--source-root", source_root]
        super().__init__(
            image=image, cmds=["dpone-executor"], arguments=arguments, secrets=list(secrets),
            env_vars=[k8s.V1EnvVar(name="HOME", value=SCRATCH),
                      k8s.V1EnvVar(name="TMPDIR", value=SCRATCH)],
            volumes=volumes, volume_mounts=mounts, do_xcom_push=True,
            security_context=pod_security_context(),
            container_security_context=container_security_context(), **kwargs)
        self.plan_digest = plan_digest
        self.deferral_timeout = deferral_timeout
        self.delivery_url = check_template(delivery_url)
        self.environment = environment
        self.environments_dir = environments_dir
        self.source_root = source_root

    def _lineage_source_root(self) -> str | None:
        return self.source_root

    def _pass_trace_context(self) -> None:
        """The pod's ``TRACEPARENT``: the current span's (none outside a valid span context)."""
        env = [var for var in self.env_vars if not (
            isinstance(var, k8s.V1EnvVar) and var.name == _tracing.ENVIRONMENT_VARIABLE)]
        traceparent = _tracing.current_traceparent()
        if traceparent is not None:
            env.append(k8s.V1EnvVar(name=_tracing.ENVIRONMENT_VARIABLE, value=traceparent))
        self.env_vars = env

    def cleanup(self, pod: Any, remote_pod: Any, xcom_result: Any = None,
                context: Any = None) -> None:
        """Keep the pod's result document: a failed pod (a blocked delivery exits 5) still
        wrote one, and the task fails with its code rather than KPO's generic failure."""
        try:
            super().cleanup(pod, remote_pod, xcom_result=xcom_result, context=context)
        except Exception:
            if not isinstance(xcom_result, Mapping):
                raise

    def execute(self, context: Any) -> Any:
        with _tracing.span("dpone.airflow.execute", plan_digest=self._facts().plan_digest):
            self._pass_trace_context()
            try:
                return self.settle_document(super().execute(context))
            finally:
                self._push_link(context)

    def settle_document(self, document: Any) -> Any:
        """The task's outcome from the executor's result document (the pod's XCom)."""
        started = time.monotonic()
        if not isinstance(document, Mapping):
            raise self._failure(from_document({}, self.environment))
        parent_id = document.get("parent_id")
        if isinstance(parent_id, str) and parent_id:
            self._note(operation_id=parent_id)
        status = document.get("status")
        if status in ("completed", "empty"):
            _stats.incr(str(status), environment=self.environment)
            return dict(document)
        pending = document.get("pending")
        if status == "pending" and isinstance(pending, Mapping) \
                and isinstance(pending.get("operation_id"), str):
            locator = self._locator()
            self.log.info("delivery %s pending on child %s; deferring (worker time %.3f s)",
                          document.get("parent_id"), pending["operation_id"],
                          time.monotonic() - started)
            self._defer_on(pending["operation_id"], locator)
        raise self._failure(from_document(document, self.environment))
