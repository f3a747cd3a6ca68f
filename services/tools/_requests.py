"""What people say when they need each workspace tool: the example requests of the built-in tools.

Written in everyday phrasing, varied in wording and in detail (a name, a time, an id or none), so that
`discover_tools` finds a tool by how people ask for it, not only by the words of its description.
Kept in one table to be read side by side: two tools' requests should never sound alike.
"""

from __future__ import annotations

REQUESTS: dict[str, tuple[str, ...]] = {
    "calendar_list_calendars": (
        "list all my calendars",
        "show the shared calendars I have access to",
        "what's the id of my work calendar",
    ),
    "calendar_list_events": (
        "what's on my calendar today",
        "do I have anything on tomorrow morning?",
        "anything booked for the weekend?",
        "how busy is my week",
        "when is my next meeting with Jordan",
    ),
    "calendar_get_event": (
        "give me the full details of that meeting",
        "who's invited to the design review",
        "where is the offsite being held",
    ),
    "calendar_create_event": (
        "put a planning session on my calendar for Monday at 3pm",
        "block two hours tomorrow morning for focus time",
        "set up a call with Lee on Friday at 10",
        "book a meeting with the client next week and invite ana@example.com",
    ),
    "calendar_update_event": (
        "push my 1:1 with Kim back an hour",
        "rename tomorrow's meeting to Sprint planning",
        "change the room for the budget meeting to Room 4",
        "make the weekly sync 45 minutes instead of an hour",
    ),
    "calendar_delete_event": (
        "cancel my yoga class on friday",
        "take the haircut appointment off my calendar",
        "I can't make the workshop, remove it from my calendar",
    ),
    "calendar_find_free_time": (
        "when do I have an hour free tomorrow",
        "find a gap for a 30 minute chat before friday",
        "what time am I available on thursday",
        "is there any free time this afternoon",
    ),
    "calendar_quick_add": (
        "add 'coffee with Ana tomorrow at 9' to my calendar",
        "lunch with Ana tomorrow at noon for 1 hour",
        "quickly put gym friday 7am on my calendar",
    ),
    "gmail_search_messages": (
        "did anyone email me about the rent?",
        "find the email with the flight confirmation",
        "show me unread messages from today",
        "search my inbox for the contract",
    ),
    "gmail_read_message": (
        "open that email and read it to me",
        "what does the message from the school say",
        "show me the full text of this email",
    ),
    "gmail_send_message": (
        "email Omar that I'm running 10 minutes late",
        "send a message to ana@example.com with the agenda",
        "write to everyone on the project and tell them the demo moved to 3pm",
    ),
    "gmail_create_draft": (
        "write a draft to the plumber but don't send it yet",
        "prepare an email to the client I can review later",
        "start an email to HR and keep it as a draft",
    ),
    "gmail_send_draft": (
        "go ahead and send that draft",
        "the draft to the insurance company is ready, send it",
        "send my saved email to the accountant",
    ),
    "gmail_reply": (
        "answer Grace and say Thursday works for me",
        "write back to the caterer thanking them",
        "respond to that email with a quick yes",
    ),
    "gmail_mark_read": (
        "mark all the promotions as read",
        "mark that email as unread so I remember it",
        "I've seen these, clear the unread flag",
    ),
    "gmail_modify_labels": (
        "flag this message as important",
        "add the Travel label to the booking email",
        "remove the Work label from these",
    ),
    "gmail_archive": (
        "archive this email",
        "clean up my inbox but keep the messages",
        "file away the old receipts",
    ),
    "gmail_trash_message": (
        "throw this email in the trash",
        "delete that promo email",
        "bin the message from the airline",
    ),
    "gmail_delete_message": (
        "delete this email forever",
        "erase the message completely, skip the trash",
        "get rid of this email for good",
    ),
    "gmail_list_labels": (
        "show my gmail labels",
        "how many unread are there in each folder",
        "what folders do I have in my mailbox",
    ),
    "tasks_list_tasklists": (
        "what task lists do I have",
        "show every list I keep tasks in",
        "which list is my default one",
    ),
    "tasks_list_tasks": (
        "what do I still have to do",
        "show my open tasks",
        "anything overdue on my to-do list?",
        "what's due before friday",
    ),
    "tasks_create_task": (
        "create a to-do to pay the electricity bill by friday",
        "remind me to water the plants tomorrow",
        "add picking up the dry cleaning to my task list",
    ),
    "tasks_update_task": (
        "rename the car wash task to detail the car",
        "move the gym membership task to next week",
        "set the tax return task due on the 30th",
    ),
    "tasks_complete_task": (
        "I'm done with the slides, tick them off",
        "check off 'book flights'",
        "mark the laundry task complete",
    ),
    "tasks_delete_task": (
        "remove the garage task",
        "delete that to-do, I don't need it anymore",
        "get rid of the birthday card task",
    ),
    "tasks_clear_completed": (
        "remove all the done items from my list",
        "clean out finished tasks",
        "delete everything I've already checked off",
    ),
}
