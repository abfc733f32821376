"""What a completed erasure does to memadmin's own rows and files (the stores were emptied by
the cascade's steps): the tombstone, then the clear subject id removed from everything we keep.
Runs inside the closing transition's transaction."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Q

from memadmin.gdpr.models import JOB_KIND, SubjectRequest, SubjectRequestStep, Tombstone
from memadmin.jobs.models import Job
from memadmin.lib.files import delete_file, delete_tree, file_mentions, walk
from memadmin.lib.keys import subject_hashes_all_keys

#: What a clear subject id is replaced by in text we keep.
ERASED = "(erased)"


#: Free-text fields of a request that people write (and may write the subject id into).
REQUEST_TEXTS = ("reason", "decision_reason", "override_reason", "extension_reason")


def subject_label(sr: SubjectRequest) -> str:
    """What stands for the subject in text we keep: its keyed hash, shortened, and key id."""
    return f"[subject {sr.subject_key_id}:{sr.subject_hash[:16]}]"


def redact(text: str, subject: str | None, label: str) -> str:
    """``text`` with every occurrence of the clear subject id replaced by ``label``."""
    return text.replace(subject, label) if subject and text else text


def request_texts_redact(sr: SubjectRequest, subject: str | None) -> list[str]:
    """Replace the clear id in the request's reasons (in memory; the caller saves the returned
    fields). Done whenever the request drops its clear id, before its receipt is sealed."""
    changed = []
    for field in REQUEST_TEXTS:
        value = getattr(sr, field)
        if subject and subject in value:
            setattr(sr, field, redact(value, subject, subject_label(sr)))
            changed.append(field)
    return changed


def scrub_text(text: str, subject: str | None) -> str:
    """A provider's message as we may store it: the clear subject id never kept."""
    if subject:
        text = text.replace(subject, ERASED)
    return text[:1000]


def tombstone_write(sr: SubjectRequest) -> None:
    """The tombstone: retain and imports of this subject are refused from now on."""
    exists = Tombstone.objects.filter(workspace_id=sr.workspace_id, key_id=sr.subject_key_id,
                                      subject_hash=sr.subject_hash,
                                      lifted_at__isnull=True).exists()
    if not exists:
        Tombstone.objects.create(workspace_id=sr.workspace_id, key_id=sr.subject_key_id,
                                 subject_hash=sr.subject_hash, request=sr)


def scrub_subject(sr: SubjectRequest, subject: str | None) -> dict[str, int]:
    """Remove the clear subject id from everything memadmin keeps. Returns how many rows and
    files of each kind were touched."""
    counts = {"requests": 0, "steps": 0, "jobs": 0, "files": 0, "task_results": 0,
              "access_files": 0, "corrections": 0}
    if not subject:
        return counts
    # 1. The reasons written on this workspace's requests (this one, earlier access requests,
    # any other that quotes the id), and steps' provider messages (scrubbed when stored; once
    # more here).
    counts["requests"] = _scrub_request_texts(sr, subject)
    counts["steps"] = _scrub_steps(sr, subject)
    # 2. Our job rows: the cascade jobs, and owners' jobs that filtered on this subject.
    job_ids = _scrub_cascade_jobs(sr, subject)
    filtered = _scrub_filtered_jobs(sr, subject)
    counts["jobs"] = len(filtered)
    job_ids += filtered
    # 3. Files this workspace's jobs keep that hold an item of the subject.
    files, touched = _delete_job_files(sr, subject, job_ids)
    counts["files"] += files
    job_ids += touched
    # 4. The task backend's rows for these jobs.
    counts["task_results"] = _scrub_task_results(job_ids)
    # 5. Earlier access-request files of this subject in this workspace.
    access_files, parts = _delete_access_files(sr, subject)
    counts["access_files"] += access_files
    counts["files"] += parts
    # 6. Every other stored file that quotes the id: uploads of imports never confirmed, parts
    # and outputs no job row points at any more.
    counts["files"] += _sweep_stored_files(sr, subject)
    # 7. Proposed corrections of the subject's rectifications (their text is the subject's
    # data), and any other that quotes the id.
    counts["corrections"] = _scrub_corrections(sr, subject)
    # 8. Quarantine entries hold item references, labels, rule ids and spans, never a subject
    # id; the built-in store deleted those of the erased items with them.
    return counts


def _scrub_corrections(sr: SubjectRequest, subject: str) -> int:
    from memadmin.gdpr.models import SubjectRequestItem

    same = Q(request__subject_key_id=sr.subject_key_id, request__subject_hash=sr.subject_hash)
    return (SubjectRequestItem.objects
            .filter(same | Q(content__contains=subject), request__workspace_id=sr.workspace_id)
            .exclude(content="").update(content=""))


def _scrub_request_texts(sr: SubjectRequest, subject: str) -> int:
    quoting = Q()
    for field in REQUEST_TEXTS:
        quoting |= Q(**{f"{field}__contains": subject})
    touched = 0
    label = subject_label(sr)
    for other in SubjectRequest.objects.filter(quoting, workspace_id=sr.workspace_id):
        SubjectRequest.objects.filter(pk=other.pk).update(**{
            field: redact(getattr(other, field), subject, label) for field in REQUEST_TEXTS})
        touched += 1
    request_texts_redact(sr, subject)  # the instance about to be saved and sealed
    return touched


def _scrub_steps(sr: SubjectRequest, subject: str) -> int:
    touched = 0
    steps = SubjectRequestStep.objects.filter(request__workspace_id=sr.workspace_id,
                                              error__contains=subject)
    for step in steps:
        step.error = scrub_text(step.error, subject)
        step.save(update_fields=["error"])
        touched += 1
    return touched


def _scrub_cascade_jobs(sr: SubjectRequest, subject: str) -> list[Any]:
    """The cascade jobs of the request: params hold the request id only; an error may quote a
    provider. Returns their ids."""
    job_ids: list[Any] = [sr.job_id] if sr.job_id else []
    for job in Job.objects.filter(kind=JOB_KIND, params__request=str(sr.pk)):
        if subject in job.error:
            Job.objects.filter(pk=job.pk).update(error=scrub_text(job.error, subject))
        job_ids.append(job.pk)
    return job_ids


def _scrub_filtered_jobs(sr: SubjectRequest, subject: str) -> list[Any]:
    """Owners' export / bulk-delete jobs that filtered on this subject lose the id from their
    params. Returns their ids (their files are deleted next)."""
    from memadmin.memory.services import job_params_erase_subject

    job_ids: list[Any] = []
    for job in Job.objects.filter(workspace_id=sr.workspace_id,
                                  params__filters__subject=subject):
        job_params_erase_subject(job)
        job_ids.append(job.pk)
    return job_ids


def _delete_job_files(sr: SubjectRequest, subject: str,
                      job_ids: list[Any]) -> tuple[int, list[Any]]:
    """Files this workspace's jobs keep (exports, whatever their filter, and import uploads)
    that hold an item of the subject are deleted: they would hand the erased data back.
    Returns (files deleted, ids of the jobs whose files went)."""
    files, touched = 0, []
    jobs = Job.objects.filter(workspace_id=sr.workspace_id).exclude(
        kind=JOB_KIND).only("pk", "kind", "params", "result_file")
    for job in jobs:
        names = [job.result_file] if job.result_file else []
        upload = job.params.get("upload") if isinstance(job.params, dict) else None
        if isinstance(upload, str) and upload:
            names.append(upload)
        for name in names:
            if file_mentions(name, subject):
                files += delete_file(name)
                if name == job.result_file:
                    Job.objects.filter(pk=job.pk).update(result_file="",
                                                         result_expires_at=None)
                touched.append(job.pk)
        if job.kind == "memory_export" and job.pk in job_ids + touched:
            files += delete_tree(f"exports/{job.pk}")
    return files, touched


def _scrub_task_results(job_ids: list[Any]) -> int:
    """The task backend's rows for these jobs: arguments are job ids only, but return values
    and tracebacks are free text."""
    from django_tasks_db.models import DBTaskResult

    if not job_ids:
        return 0
    return DBTaskResult.objects.filter(
        args_kwargs__args__0__in=[str(pk) for pk in job_ids]).update(
        return_value=None, traceback="")


def _delete_access_files(sr: SubjectRequest, subject: str) -> tuple[int, int]:
    """Earlier access requests of the subject: the ZIP, and the parts of one that never
    completed. Returns (ZIPs deleted, part files deleted)."""
    hashes = Q()
    for key_id, digest in subject_hashes_all_keys(sr.workspace_id, subject):
        hashes |= Q(subject_key_id=key_id, subject_hash=digest)
    zips = parts = 0
    for earlier in SubjectRequest.objects.filter(hashes, workspace_id=sr.workspace_id,
                                                 kind="access"):
        zips += delete_file(earlier.access_file)
        parts += delete_tree(f"subject-requests/{earlier.pk}")
        if earlier.access_file:
            SubjectRequest.objects.filter(pk=earlier.pk).update(access_file="",
                                                                access_file_expires_at=None)
    return zips, parts


#: Where stored files live, and which rows own the first path component under each prefix.
SWEPT_PREFIXES = ("imports", "exports", "subject-requests")


def _owner_workspace(name: str) -> Any:
    """The workspace a stored file belongs to when its path says (a job's export, a request's
    output), else None (an upload not yet confirmed belongs to no workspace yet)."""
    prefix, _, rest = name.partition("/")
    head = rest.split("/", 1)[0].split(".", 1)[0]
    try:
        pk = uuid.UUID(head)
    except ValueError:
        return None
    if prefix == "exports":
        return Job.objects.filter(pk=pk).values_list("workspace_id", flat=True).first()
    if prefix == "subject-requests":
        return (SubjectRequest.objects.filter(pk=pk)
                .values_list("workspace_id", flat=True).first())
    return None


def _sweep_stored_files(sr: SubjectRequest, subject: str) -> int:
    """Delete every stored file under the swept prefixes that quotes the subject id, except
    those another workspace owns. Uploads awaiting confirmation name no workspace: one that
    quotes an erased id goes (its uploader can upload it again)."""
    removed = 0
    for prefix in SWEPT_PREFIXES:
        for name in list(walk(prefix)):
            owner = _owner_workspace(name)
            if owner is not None and owner != sr.workspace_id:
                continue
            if file_mentions(name, subject):
                removed += delete_file(name)
    return removed
