/**
 * A confirmation before a step that is hard to take back (issue 29 point 4: disabling a tenant, revoking the key
 * in use, going live): a modal `<dialog>` that says what the step does, asks for a reason when someone will read
 * it (`reason`), and is answered with the keyboard — it takes the focus, Escape or Cancel closes it, and the
 * focus goes back to what opened it. Nothing is done until its button is pressed.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";
import { useDashboard } from "./context.ts";

export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  reason,
  onConfirm,
  onCancel,
}: {
  title: string;
  /** What the step does, and what it keeps. */
  children: ComponentChildren;
  confirmLabel: string;
  /** The reason field's label, when a reason is asked (required). */
  reason?: string;
  onConfirm: (reason: string | undefined) => void;
  onCancel: () => void;
}) {
  const { t } = useDashboard();
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const textId = useId();
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    return () => opener?.focus();
  }, []);
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const typed = String(new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "").trim();
    onConfirm(reason ? typed : undefined);
  };
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby={titleId}
      aria-describedby={textId}
      data-testid="confirm"
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <form class="stack" onSubmit={submit}>
        <h2 id={titleId}>{title}</h2>
        <p id={textId}>{children}</p>
        {reason ? (
          <label>
            {reason}
            <textarea name="reason" required maxLength={500} rows={3} />
          </label>
        ) : null}
        <div class="actions">
          <button type="submit" class="danger">
            {confirmLabel}
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            {t("confirm.cancel")}
          </button>
        </div>
      </form>
    </dialog>
  );
}
